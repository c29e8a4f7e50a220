import { EvalServiceError } from '../eval.errors';
import type { EvalStore } from '../eval.types';

/** Every method of the store interface (spec 05 §2.4: a custom store implements all of it). */
const STORE_METHODS: readonly (keyof EvalStore)[] = [
  'openDedicatedConnection',
  'ownershipIdentity',
  'assertSchema',
  'recover',
  'createEvaluation',
  'transition',
  'getJob',
  'getResult',
  'listJobs',
  'getSet',
  'listSets',
  'putBaseline',
  'getBaseline',
  'prune',
];

/** The store, if it implements the whole interface; else `invalid_eval_store_module`. */
export function checkEvalStore(store: unknown): EvalStore {
  if (typeof store !== 'object' || store === null) throw new EvalServiceError('invalid_eval_store_module');
  let complete = false;
  try {
    complete = STORE_METHODS.every((method) => typeof (store as Record<string, unknown>)[method] === 'function');
  } catch {
    complete = false;
  }
  if (!complete) throw new EvalServiceError('invalid_eval_store_module');
  return store as EvalStore;
}
