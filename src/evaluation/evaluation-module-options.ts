import { isFunction } from '../shared/options/option-rules';
import { isPlainObject } from '../shared/options/plain-object';
import { readStrictOptions } from '../shared/options/strict-options';
import { EvalServiceError } from './eval.errors';
import type { EvalScope, EvalStore } from './eval.types';
import type { EvalServiceOptions } from './service/eval-service-options';
import type { PostgresEvalStore } from './store/postgres-eval-store';
import type { PostgresEvalStoreOptions } from './store/eval-store-options';

/** Injection token of the resolved `EvaluationModule` options. */
export const EVALUATION_MODULE_OPTIONS = Symbol('EVALUATION_MODULE_OPTIONS');

/** The scope of an HTTP request, derived by the application from its authentication. */
export type ResolveEvalScope = (request: unknown) => EvalScope | Promise<EvalScope>;

/** Options of `EvaluationModule.forRoot` (spec 05 §10). */
export interface EvaluationModuleOptions {
  /** Options of the managed `PostgresEvalStore`. @default the store's defaults */
  readonly store?: PostgresEvalStoreOptions;
  /** Options of the `EvalService`; `ownership` defaults to `'standby'` here. @default the service's defaults */
  readonly service?: EvalServiceOptions;
  /** The scope of an HTTP request. No default: without it the `/evaluations` routes answer 404. */
  readonly resolveScope?: ResolveEvalScope;
  /**
   * Wraps the managed store before the service takes it (a decorator that meters or injects
   * failures); the wrapper must delegate to the store it is given. @default none
   */
  readonly wrapStore?: (store: PostgresEvalStore) => EvalStore;
}

/** The module's options after validation (the store and the service validate their own when built). */
export interface ResolvedEvaluationModuleOptions {
  readonly store: PostgresEvalStoreOptions | undefined;
  readonly service: EvalServiceOptions;
  readonly resolveScope: ResolveEvalScope | undefined;
  readonly wrapStore: ((store: PostgresEvalStore) => EvalStore) | undefined;
}

const RULES = { store: isPlainObject, service: isPlainObject, resolveScope: isFunction, wrapStore: isFunction };

/** Validates the module options: `unknown_eval_service_options` (`{keys}`) or `invalid_eval_service_options` (`{option}`). */
export function resolveEvaluationModuleOptions(options: unknown): ResolvedEvaluationModuleOptions {
  const values = readStrictOptions(options, RULES, 'options', {
    unknownKeys: (keys) => new EvalServiceError('unknown_eval_service_options', { keys }),
    invalid: (option) => new EvalServiceError('invalid_eval_service_options', { option }),
  });
  const service = (values.service as EvalServiceOptions | undefined) ?? {};
  return Object.freeze({
    store: values.store as PostgresEvalStoreOptions | undefined,
    service: { ownership: 'standby' as const, ...service },
    resolveScope: values.resolveScope as ResolveEvalScope | undefined,
    wrapStore: values.wrapStore as ResolvedEvaluationModuleOptions['wrapStore'],
  });
}
