import { optionFailureDetails, readOptions } from '../shared/options/option-reader';
import { isBoolean, isFunction } from '../shared/options/option-rules';
import { isPlainObject } from '../shared/options/plain-object';
import { TraceStoreError } from './trace-store.errors';
import type { TraceStoreOptions } from './trace-store-options';

/** Injection token of the resolved `TraceStoreModule` options. */
export const TRACE_STORE_MODULE_OPTIONS = Symbol('TRACE_STORE_MODULE_OPTIONS');

/** Resolves the calling principal of a `GET /traces` request (e.g. from your authentication). */
export type ResolvePrincipal = (request: unknown) => string | Promise<string>;

/** Options of `TraceStoreModule.forRoot` (spec 06 §11). */
export interface TraceStoreModuleOptions {
  /** Without a store, producers get no receiver and `GET /traces` answers 503. @default true */
  readonly enabled?: boolean;
  /** The store's options (spec 06 §2). @default the store's defaults */
  readonly options?: TraceStoreOptions;
  /** The principal of an HTTP request. No default: without it `GET /traces` answers 404. */
  readonly resolvePrincipal?: ResolvePrincipal;
}

/** The module's options after validation. */
export interface ResolvedTraceStoreModuleOptions {
  readonly enabled: boolean;
  readonly options: TraceStoreOptions | undefined;
  readonly resolvePrincipal: ResolvePrincipal | undefined;
}

const RULES = { enabled: isBoolean, options: isPlainObject, resolvePrincipal: isFunction };

/** Validates the module options; the store validates its own options when built. */
export function resolveTraceStoreModuleOptions(options: unknown): ResolvedTraceStoreModuleOptions {
  const read = readOptions(options, RULES, { name: 'options', unknownKeys: 'refuse' });
  if (!read.ok) throw new TraceStoreError('invalid_trace_store_options', optionFailureDetails(read.fields));
  return Object.freeze({
    enabled: (read.values.enabled as boolean | undefined) ?? true,
    options: read.values.options as TraceStoreOptions | undefined,
    resolvePrincipal: read.values.resolvePrincipal as ResolvePrincipal | undefined,
  });
}
