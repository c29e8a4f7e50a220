import { isAbortSignal } from '../../shared/async/abort-signal';
import type { ErrorDetails } from '../../shared/errors/agent-runtime-error';
import { readOwnData } from '../../shared/options/option-reader';
import { isSafeIntegerAtLeast } from '../../shared/options/plain-object';
import { RuntimeServiceError } from '../runtime-service.errors';
import { checkMemoryScope, isScopePart } from '../service-scope';
import type { AdapterCallOptions, MemoryScope } from '../services.types';
import type { MemoryAdapterConfig } from './memory-adapter-config';

/** Largest `jobId` of an ingestion, UTF-8 bytes. */
export const MAX_JOB_ID_BYTES = 1024;

/** U+0000 (which Postgres text refuses) or a lone surrogate. */
const UNSTORABLE = /[\u0000\p{Cs}]/u;

/** `invalid_memory_request` naming the offending field (and the event's position, the bound): never a value. */
export function invalidRequest(details: ErrorDetails): RuntimeServiceError {
  return new RuntimeServiceError('invalid_memory_request', details);
}

/** A string Postgres can store as text and the in-memory adapter treats alike: no U+0000, no lone surrogate. */
export function isStorableText(value: unknown): value is string {
  return typeof value === 'string' && !UNSTORABLE.test(value);
}

/** The ingestion of `addEvents`: `epoch` a non-negative safe integer, `jobId` (ignored beyond its check) 1..1024 UTF-8 bytes. */
export interface CheckedIngestion {
  readonly epoch: number;
  readonly jobId: string | null;
}

/** `{epoch, jobId?}` read without running a getter; else `invalid_memory_request` (`field` `ingestion`, `epoch` or `jobId`). */
export function checkIngestion(value: unknown): CheckedIngestion {
  const own = readOwnData(value, ['epoch', 'jobId']);
  if (own === null || own.accessors.length > 0) throw invalidRequest({ field: 'ingestion' });
  const { epoch, jobId } = own.values;
  if (!isSafeIntegerAtLeast(epoch, 0)) throw invalidRequest({ field: 'epoch' });
  if (jobId !== undefined && !(isStorableText(jobId) && jobId.length > 0 && Buffer.byteLength(jobId, 'utf8') <= MAX_JOB_ID_BYTES)) {
    throw invalidRequest({ field: 'jobId' });
  }
  return Object.freeze({ epoch, jobId: jobId ?? null });
}

/** A search as the adapters run it: the scope, the query, and the number of hits wanted, at most `maxResults`. */
export interface CheckedSearch {
  readonly scope: MemoryScope;
  readonly query: string;
  readonly limit: number;
}

/**
 * `{appName, userId, query, limit?}`: the scope (`invalid_memory_scope`), then `query` a string of at
 * most `maxQueryBytes` UTF-8 bytes without U+0000 or lone surrogates and `limit` a positive safe
 * integer (`invalid_memory_request`, `field` `query` or `limit`, `limit: 'maxQueryBytes'` for a long query).
 */
export function checkSearch(value: unknown, config: MemoryAdapterConfig): CheckedSearch {
  const scope = checkMemoryScope(value);
  const own = readOwnData(value, ['query', 'limit']);
  if (own === null || own.accessors.length > 0) throw invalidRequest({ field: own === null ? 'request' : own.accessors[0] });
  const { query, limit } = own.values;
  if (!isStorableText(query)) throw invalidRequest({ field: 'query' });
  // every UTF-16 code unit takes at least one UTF-8 byte: a long query is refused before it is scanned
  if (query.length > config.maxQueryBytes || Buffer.byteLength(query, 'utf8') > config.maxQueryBytes) {
    throw invalidRequest({ field: 'query', limit: 'maxQueryBytes' });
  }
  if (limit !== undefined && !isSafeIntegerAtLeast(limit, 1)) throw invalidRequest({ field: 'limit' });
  return Object.freeze({ scope, query, limit: Math.min(limit ?? config.maxResults, config.maxResults) });
}

/** What `addSessionToMemory` reads of its input: the session's scope and id, and its events (checked later). */
export interface CheckedSessionInput {
  readonly scope: MemoryScope;
  readonly sessionId: string;
  readonly events: unknown;
}

/**
 * `{session, events}` where `session` is the Runner's session record: its `app_name` and `user_id`
 * make the scope (`invalid_memory_scope`); a missing or malformed `session_id` or input is
 * `invalid_memory_request` (`field` `input`, `session` or `session_id`).
 */
export function checkSessionInput(value: unknown): CheckedSessionInput {
  const input = readOwnData(value, ['session', 'events']);
  if (input === null || input.accessors.length > 0) throw invalidRequest({ field: 'input' });
  const session = readOwnData(input.values.session, ['session_id', 'app_name', 'user_id']);
  if (session === null || session.accessors.length > 0) throw invalidRequest({ field: 'session' });
  const scope = checkMemoryScope({ appName: session.values.app_name, userId: session.values.user_id });
  const sessionId = session.values.session_id;
  if (!isScopePart(sessionId)) throw invalidRequest({ field: 'session_id' });
  return Object.freeze({ scope, sessionId, events: input.values.events });
}

/** The call options of an adapter operation, or `undefined`; anything but `{signal?, timeoutMs?}` with a genuine signal and a positive timeout is a programming error of the caller. */
export function checkCallOptions(value: unknown): AdapterCallOptions | undefined {
  if (value === undefined) return undefined;
  const own = readOwnData(value, ['signal', 'timeoutMs']);
  const { signal, timeoutMs } = own?.values ?? {};
  const valid = own !== null && own.accessors.length === 0 && (signal === undefined || isAbortSignal(signal)) && (timeoutMs === undefined || (typeof timeoutMs === 'number' && timeoutMs > 0));
  if (!valid) throw invalidRequest({ field: 'options' });
  return value as AdapterCallOptions;
}

/**
 * Throws when the call's signal has aborted: its reason when that is a {@link RuntimeServiceError}
 * (the router aborts with its own code), else `scope_route_caller_unavailable`.
 */
export function assertCallLive(options: AdapterCallOptions | undefined): void {
  const signal = options?.signal;
  if (signal === undefined || !signal.aborted) return;
  const reason: unknown = signal.reason;
  throw RuntimeServiceError.isRuntimeServiceError(reason) ? reason : new RuntimeServiceError('scope_route_caller_unavailable');
}
