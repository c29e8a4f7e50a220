import type { RunConfig } from '@google/adk' with { 'resolution-mode': 'import' };
import { RunnerError } from '../../runner/runner.errors';
import { isTokenId } from '../../shared/ids/id-rule';
import { isAbortSignal } from '../../shared/async/abort-signal';
import { isValidId } from '../../shared/ids/id-rule';
import { readOptions, readOwnData } from '../../shared/options/option-reader';
import { isPlainObject } from '../../shared/options/plain-object';
import type { AdkContent } from './adk.types';

/**
 * One run of an `AdkRunnerFacade`.
 *
 * @example
 * const request: AdkRunRequest = { userId: 'u1', sessionId: 's1', newMessage: { role: 'user', parts: [{ text: 'hi' }] }, signal: AbortSignal.timeout(30_000) };
 */
export interface AdkRunRequest {
  /** The ADK user id (the package's id rule: 1..256 UTF-8 bytes, no control characters). */
  readonly userId: string;
  /** `^[A-Za-z0-9._:-]{1,128}$`; the session is created when absent. */
  readonly sessionId: string;
  /** The user's message: ADK Content with at least one part (`role`, when given, `'user'`). */
  readonly newMessage: AdkContent;
  /** Passed to ADK: state changes stored with the user message. @default none */
  readonly stateDelta?: Record<string, unknown>;
  /** Passed to ADK. @default ADK's defaults */
  readonly runConfig?: RunConfig;
  /** Aborting it cancels the run (`cancelled {reason}`). @default none */
  readonly signal?: AbortSignal;
}

/** A request after validation; nothing is read from the caller's object again. */
export interface ValidAdkRunRequest {
  readonly userId: string;
  readonly sessionId: string;
  readonly newMessage: AdkContent;
  readonly stateDelta: Record<string, unknown> | undefined;
  readonly runConfig: RunConfig | undefined;
  readonly signal: AbortSignal | undefined;
}

const FIELDS: Readonly<Record<string, string>> = Object.freeze({
  userId: 'user_id',
  sessionId: 'session_id',
  newMessage: 'new_message',
  stateDelta: 'state_delta',
  runConfig: 'run_config',
  signal: 'signal',
});

const RULES = {
  userId: (value: unknown) => isValidId(value),
  sessionId: isTokenId,
  newMessage: isMessage,
  stateDelta: isPlainObject,
  runConfig: isPlainObject,
  signal: isAbortSignal,
};

/**
 * Validates `runAsync`'s request before anything else happens: `invalid_run_request {field}` with
 * the field in snake_case (`user_id`, `session_id`, `new_message`, …); an unknown key is refused.
 */
export function validateAdkRunRequest(request: unknown): ValidAdkRunRequest {
  const read = readOptions(request, RULES, { name: 'request', unknownKeys: 'refuse' });
  if (!read.ok) throw new RunnerError('invalid_run_request', { field: fieldName(read.fields[0]) });
  const values = read.values;
  for (const required of ['userId', 'sessionId', 'newMessage'] as const) {
    if (values[required] === undefined) throw new RunnerError('invalid_run_request', { field: FIELDS[required] });
  }
  return {
    userId: values.userId as string,
    sessionId: values.sessionId as string,
    newMessage: values.newMessage as AdkContent,
    stateDelta: values.stateDelta as Record<string, unknown> | undefined,
    runConfig: values.runConfig as RunConfig | undefined,
    signal: values.signal as AbortSignal | undefined,
  };
}

/** A request key as `details.field` names it: snake_case (an unknown key too; `'unknown'` for one that is no identifier). */
function fieldName(key: string): string {
  return FIELDS[key] ?? key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/** ADK Content as ADK accepts a new message: a plain object, parts a non-empty array of objects. */
function isMessage(value: unknown): boolean {
  const own = readOwnData(value, ['role', 'parts']);
  if (own === null || own.accessors.length > 0) return false;
  const { role, parts } = own.values;
  if (role !== undefined && role !== 'user') return false;
  try {
    return Array.isArray(parts) && parts.length > 0 && parts.every((part) => isPlainObject(part));
  } catch {
    // an exotic array (a throwing element getter) is not a message
    return false;
  }
}
