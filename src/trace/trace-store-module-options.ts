import { PRINCIPAL_OPTION_RULES, PrincipalGate, type PrincipalOptions } from '../http/principal';
import { optionFailureDetails, readOptions } from '../shared/options/option-reader';
import { isBoolean } from '../shared/options/option-rules';
import { isPlainObject } from '../shared/options/plain-object';
import { TraceStoreError } from './trace-store.errors';
import type { TraceStoreOptions } from './trace-store-options';

/** Injection token of the resolved `TraceStoreModule` options. */
export const TRACE_STORE_MODULE_OPTIONS = Symbol('TRACE_STORE_MODULE_OPTIONS');

/**
 * Options of `TraceStoreModule.forRoot` (spec 06 §11). `GET /traces` reads the partition named by the
 * request's principal id (`resolvePrincipal`, or `anonymous` with `allowAnonymous`); without either it
 * answers 404, and a request without a principal 401 `unauthenticated`.
 */
export interface TraceStoreModuleOptions extends PrincipalOptions {
  /** Without a store, producers get no receiver and `GET /traces` answers 503. @default true */
  readonly enabled?: boolean;
  /** The store's options (spec 06 §2). @default the store's defaults */
  readonly options?: TraceStoreOptions;
}

/** The module's options after validation. */
export interface ResolvedTraceStoreModuleOptions {
  readonly enabled: boolean;
  readonly options: TraceStoreOptions | undefined;
  readonly principals: PrincipalGate;
}

const RULES = { enabled: isBoolean, options: isPlainObject, ...PRINCIPAL_OPTION_RULES };

/** Validates the module options; the store validates its own options when built. */
export function resolveTraceStoreModuleOptions(options: unknown): ResolvedTraceStoreModuleOptions {
  const read = readOptions(options, RULES, { name: 'options', unknownKeys: 'refuse' });
  if (!read.ok) throw new TraceStoreError('invalid_trace_store_options', optionFailureDetails(read.fields));
  return Object.freeze({
    enabled: (read.values.enabled as boolean | undefined) ?? true,
    options: read.values.options as TraceStoreOptions | undefined,
    principals: new PrincipalGate(read.values),
  });
}
