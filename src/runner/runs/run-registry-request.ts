import { isTokenId, isValidId } from '../../shared/ids/id-rule';
import { readOptions, readOwnData } from '../../shared/options/option-reader';
import { isBoolean } from '../../shared/options/option-rules';
import type { Message } from '../content.types';
import { isStorableMessage } from '../loop/message';
import type { StartRunRequest } from './run-registry.types';
import { RunnerError } from '../runner.errors';

/** The record field each argument of `start` is reported as. */
const FIELD_NAMES: Readonly<Record<string, string>> = { userId: 'user_id', sessionId: 'session_id', owner: 'owner_principal' };

const START_RULES = {
  agent: (value: unknown) => typeof value === 'string' && value.length > 0,
  userId: (value: unknown) => isValidId(value),
  owner: (value: unknown) => isValidId(value),
  sessionId: isTokenId,
  message: isStorableMessage,
  durable: isBoolean,
};

const MAX_REASON_LENGTH = 128;

/** A validated `start` request. */
export interface ReadStartRequest {
  readonly agent: string;
  readonly userId: string;
  readonly owner: string | undefined;
  readonly sessionId: string | undefined;
  readonly message: Message;
  readonly durable: boolean | undefined;
}

/**
 * Reads `start`'s request; a failing field, by its record name (`session_id`, `user_id`, ...), gives
 * `invalid_run_request` (`{field}`), an unknown key `{field: 'request'}`.
 */
export function readStartRequest(request: StartRunRequest): ReadStartRequest {
  const read = readOptions(request, START_RULES, { name: 'request', unknownKeys: 'refuse' });
  // an unknown key's name comes from the caller: it is not echoed
  if (!read.ok) throw invalidRunRequest(read.fields.find((field) => Object.hasOwn(START_RULES, field)) ?? 'request');
  const values = read.values;
  if (request === undefined) throw invalidRunRequest('request');
  for (const required of ['agent', 'userId', 'message'] as const) if (values[required] === undefined) throw invalidRunRequest(required);
  return Object.freeze({
    agent: values.agent as string,
    userId: values.userId as string,
    owner: values.owner as string | undefined,
    sessionId: values.sessionId as string | undefined,
    message: values.message as Message,
    durable: values.durable as boolean | undefined,
  });
}

/** A cancel reason: 1..128 characters, else `invalid_run_request` (`{field: 'reason'}`). */
export function readCancelReason(reason: unknown): string {
  if (typeof reason !== 'string' || reason.length === 0 || reason.length > MAX_REASON_LENGTH || !reason.isWellFormed()) throw invalidRunRequest('reason');
  return reason;
}

/** `{confirmed, payload}` of a confirmation, read without running the caller's code (getters stay uncalled). */
export function readConfirmation(input: unknown): { readonly confirmed: unknown; readonly payload?: unknown } {
  const own = readOwnData(input, ['confirmed', 'payload']);
  if (own === null || own.accessors.length > 0) throw new RunnerError('resume_input_required', { field: own?.accessors[0] ?? 'confirmed' });
  if (own.unknown.length > 0) throw invalidRunRequest('input');
  return own.values.payload === undefined ? { confirmed: own.values.confirmed } : { confirmed: own.values.confirmed, payload: own.values.payload };
}

/** `invalid_run_request` naming one field by its record name. */
export function invalidRunRequest(field: string): RunnerError {
  return new RunnerError('invalid_run_request', { field: FIELD_NAMES[field] ?? field });
}
