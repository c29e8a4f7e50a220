import type { DataSource } from 'typeorm';
import type { SchemaCheckTarget } from '../../database/schema/startup-schema-check';
import { EvalServiceError } from '../eval.errors';
import type { EvalStore } from '../eval.types';
import { resolveEvalStoreOptions } from '../store/eval-store-options';
import { evalStoreTableSpecs } from '../store/eval-store.schema';

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

/**
 * The managed `PostgresEvalStore`'s tables as the app-wide start-up check validates them (the
 * pool's `synchronous_commit` only; the store's own check also reads its dedicated connection).
 * Throws `invalid_eval_store_options` as the store does.
 */
export function evalStoreSchemaTarget(dataSource: DataSource, options: unknown): SchemaCheckTarget {
  const settings = resolveEvalStoreOptions(options);
  return {
    dataSource,
    specs: evalStoreTableSpecs(settings.tablePrefix),
    options: {
      ...(settings.schema === null ? {} : { schema: settings.schema }),
      connectRetries: settings.connectRetries,
      requireSynchronousStandby: settings.requireSynchronousStandby,
    },
  };
}
