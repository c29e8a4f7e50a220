import { PRINCIPAL_OPTION_RULES, PrincipalGate, type Principal, type PrincipalOptions } from '../http/principal';
import { readOptions } from '../shared/options/option-reader';
import { isFunction } from '../shared/options/option-rules';
import { isPlainObject } from '../shared/options/plain-object';
import { evalOptionFailure } from './eval-option-failure';
import type { EvalScope, EvalStore } from './eval.types';
import type { EvalServiceOptions } from './service/eval-service-options';
import type { PostgresEvalStore } from './store/postgres-eval-store';
import type { PostgresEvalStoreOptions } from './store/eval-store-options';

/** Injection token of the resolved `EvaluationModule` options. */
export const EVALUATION_MODULE_OPTIONS = Symbol('EVALUATION_MODULE_OPTIONS');

/**
 * The scope of an HTTP request, derived by the application from its authentication: `principal` is
 * the request's principal when the module has `resolvePrincipal` (or `allowAnonymous`), else `null`.
 */
export type ResolveEvalScope = (request: unknown, principal: Principal | null) => EvalScope | Promise<EvalScope>;

/**
 * Options of `EvaluationModule.forRoot` (spec 05 §10). The scope of a request comes from the principal
 * (`resolvePrincipal`, the option every module with routes takes: scope `{app: principal.id}`) and/or
 * `resolveScope`; without either, every `/evaluations` route answers 404.
 */
export interface EvaluationModuleOptions extends PrincipalOptions {
  /** Options of the managed `PostgresEvalStore`. @default the store's defaults */
  readonly store?: PostgresEvalStoreOptions;
  /** Options of the `EvalService`; `ownership` defaults to `'standby'` here. @default the service's defaults */
  readonly service?: EvalServiceOptions;
  /** The scope of an HTTP request (after its principal, when there are principal options). @default `{app: principal.id}` */
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
  readonly principals: PrincipalGate;
  readonly wrapStore: ((store: PostgresEvalStore) => EvalStore) | undefined;
}

const RULES = { store: isPlainObject, service: isPlainObject, resolveScope: isFunction, wrapStore: isFunction, ...PRINCIPAL_OPTION_RULES };

/**
 * Validates the module options: `unknown_eval_service_options` naming every unknown key (`{field}` or
 * `{fields}`), else `invalid_eval_service_options` naming the first bad option (`{field}`).
 */
export function resolveEvaluationModuleOptions(options: unknown): ResolvedEvaluationModuleOptions {
  const read = readOptions(options, RULES, { name: 'options', unknownKeys: 'refuse' });
  if (!read.ok) throw evalOptionFailure(read, 'unknown_eval_service_options', 'invalid_eval_service_options');
  const values = read.values;
  const service = (values.service as EvalServiceOptions | undefined) ?? {};
  return Object.freeze({
    store: values.store as PostgresEvalStoreOptions | undefined,
    service: { ownership: 'standby' as const, ...service },
    resolveScope: values.resolveScope as ResolveEvalScope | undefined,
    principals: new PrincipalGate(values),
    wrapStore: values.wrapStore as ResolvedEvaluationModuleOptions['wrapStore'],
  });
}
