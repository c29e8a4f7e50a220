import { isAbortSignal } from '../../shared/async/abort-signal';
import type { ErrorDetails } from '../../shared/errors/agent-runtime-error';
import { optionFailureDetails, readOptions } from '../../shared/options/option-reader';
import { isSafeIntegerAtLeast } from '../../shared/options/plain-object';
import { RuntimeServiceError } from '../runtime-service.errors';
import { checkMemoryScope, isScopePart } from '../service-scope';
import type { AdapterCallOptions, MemoryScope } from '../services.types';
import type { MemoryAdapterConfig } from './memory-adapter-config';
import { anyValue } from '../config-reader';

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

const isJobId = (value: unknown): boolean => isStorableText(value) && value.length > 0 && Buffer.byteLength(value, 'utf8') <= MAX_JOB_ID_BYTES;
const INGESTION_RULES = { epoch: (value: unknown) => isSafeIntegerAtLeast(value, 0), jobId: isJobId };

/**
 * `{epoch, jobId?}` read with the shared reader (other keys ignored, no getter run); else
 * `invalid_memory_request` naming what failed (`field` or sorted `fields`: `ingestion` itself,
 * `epoch`, `jobId`).
 */
export function checkIngestion(value: unknown): CheckedIngestion {
  const read = readOptions(value ?? null, INGESTION_RULES, { name: 'ingestion', unknownKeys: 'ignore' });
  if (!read.ok) throw invalidRequest(optionFailureDetails(read.fields));
  const { epoch, jobId } = read.values as { epoch?: number; jobId?: string };
  if (epoch === undefined) throw invalidRequest({ field: 'epoch' });
  return Object.freeze({ epoch, jobId: jobId ?? null });
}

/** A search as the adapters run it: the scope, the query, and the number of hits wanted, at most `maxResults`. */
export interface CheckedSearch {
  readonly scope: MemoryScope;
  readonly query: string;
  readonly limit: number;
}

const SEARCH_RULES = { query: isStorableText, limit: (value: unknown) => isSafeIntegerAtLeast(value, 1) };

/**
 * `{appName, userId, query, limit?}`: the scope (`invalid_memory_scope`), then `query` a string of at
 * most `maxQueryBytes` UTF-8 bytes without U+0000 or lone surrogates and `limit` a positive safe
 * integer, read with the shared reader (`invalid_memory_request` naming what failed, `field` or
 * sorted `fields`; `{field: 'query', limit: 'maxQueryBytes'}` for a long query).
 */
export function checkSearch(value: unknown, config: MemoryAdapterConfig): CheckedSearch {
  const scope = checkMemoryScope(value);
  const read = readOptions(value, SEARCH_RULES, { name: 'request', unknownKeys: 'ignore' });
  if (!read.ok) throw invalidRequest(optionFailureDetails(read.fields));
  const { query, limit } = read.values as { query?: string; limit?: number };
  if (query === undefined) throw invalidRequest({ field: 'query' });
  // every UTF-16 code unit takes at least one UTF-8 byte: a long query is refused before it is scanned
  if (query.length > config.maxQueryBytes || Buffer.byteLength(query, 'utf8') > config.maxQueryBytes) {
    throw invalidRequest({ field: 'query', limit: 'maxQueryBytes' });
  }
  return Object.freeze({ scope, query, limit: Math.min(limit ?? config.maxResults, config.maxResults) });
}

/** What `addSessionToMemory` reads of its input: the session's scope and id, and its events (checked later). */
export interface CheckedSessionInput {
  readonly scope: MemoryScope;
  readonly sessionId: string;
  readonly events: unknown;
}

const SESSION_INPUT_RULES = { session: anyValue, events: anyValue };
const SESSION_RECORD_RULES = { session_id: anyValue, app_name: anyValue, user_id: anyValue };

/**
 * `{session, events}` where `session` is the Runner's session record, read with the shared reader:
 * its `app_name` and `user_id` make the scope (`invalid_memory_scope`); an unreadable input or
 * session, or a missing or malformed `session_id`, is `invalid_memory_request` (`field` `input`,
 * `session` or `session_id`).
 */
export function checkSessionInput(value: unknown): CheckedSessionInput {
  const input = readOptions(value ?? null, SESSION_INPUT_RULES, { name: 'input', unknownKeys: 'ignore' });
  if (!input.ok) throw invalidRequest({ field: 'input' });
  const session = readOptions(input.values.session ?? null, SESSION_RECORD_RULES, { name: 'session', unknownKeys: 'ignore' });
  if (!session.ok) throw invalidRequest({ field: 'session' });
  const scope = checkMemoryScope({ appName: session.values.app_name, userId: session.values.user_id });
  const sessionId = session.values.session_id;
  if (!isScopePart(sessionId)) throw invalidRequest({ field: 'session_id' });
  return Object.freeze({ scope, sessionId, events: input.values.events });
}

const CALL_OPTION_RULES = { signal: isAbortSignal, timeoutMs: (value: unknown) => typeof value === 'number' && value > 0 };

/**
 * The call options of an adapter operation, or `undefined`, read with the shared reader; anything but
 * `{signal?, timeoutMs?}` with a genuine signal and a positive timeout is a programming error of the
 * caller: `invalid_memory_request` `{field: 'options'}`, naming the argument.
 */
export function checkCallOptions(value: unknown): AdapterCallOptions | undefined {
  if (value === undefined) return undefined;
  const read = readOptions(value, CALL_OPTION_RULES, { name: 'options', unknownKeys: 'ignore' });
  if (!read.ok) throw invalidRequest({ field: 'options' });
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
