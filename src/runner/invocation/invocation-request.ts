import { isAbortSignal } from '../../shared/async/abort-signal';
import { measure } from '../../json/measure';
import { frozenJsonCopy } from '../../json/json-copy';
import { storableJsonText } from '../../json/storable-json';
import { isTokenId, isValidId } from '../../shared/ids/id-rule';
import { newSessionId } from '../session-id';
import type { ConfirmationDecision } from '../agent.types';
import type { JsonValue } from '../content.types';
import { isStorableMessage } from '../loop/message';
import type { ResolvedRunnerOptions } from '../runner-options';
import { RunnerError } from '../runner.errors';
import type { ResumeRequest, RunRequest } from '../runner.types';
import type { TelemetrySink } from '../../telemetry/telemetry-sink';

/** Largest resume payload without a policy (spec 03 §7). */
export const DEFAULT_MAX_PAYLOAD_BYTES = 64 * 1024;

const invalid = (field: string) => new RunnerError('invalid_run_request', { field });
const isInvocationId = (value: unknown): value is string => typeof value === 'string' && /^[A-Za-z0-9_-]{1,128}$/.test(value);
const isCallback = (value: unknown) => value === undefined || typeof value === 'function';
const isSignal = (value: unknown) => value === undefined || isAbortSignal(value);
const isSink = (value: unknown): value is TelemetrySink | undefined => value === undefined || (typeof value === 'object' && value !== null && typeof (value as TelemetrySink).emit === 'function');

/** A run request after validation; nothing is read from the caller's object again. */
export interface ValidRunRequest {
  readonly userId: string;
  readonly sessionId: string;
  readonly message: unknown;
  readonly durable: boolean;
  readonly signal: AbortSignal | undefined;
  readonly onAdmitted: RunRequest['onAdmitted'];
  readonly runId: string | undefined;
  readonly events: TelemetrySink | undefined;
}

/** Validates `runAsync`'s request before anything else happens (`invalid_run_request {field}`); a message the session stores would refuse (U+0000, a lone surrogate) is `{field: 'message'}`. */
export function validateRunRequest(options: ResolvedRunnerOptions, request: unknown): ValidRunRequest {
  if (typeof request !== 'object' || request === null) throw invalid('request');
  const { userId, sessionId, message, durable, signal, onAdmitted, runId, events } = request as RunRequest;
  if (!isValidId(userId)) throw invalid('user_id');
  if (sessionId !== undefined && !isTokenId(sessionId)) throw invalid('session_id');
  if (!isStorableMessage(message)) throw invalid('message');
  if (durable !== undefined && typeof durable !== 'boolean') throw invalid('durable');
  if (durable === true && options.ledger === null) throw invalid('durable');
  if (!isSignal(signal)) throw invalid('signal');
  if (!isCallback(onAdmitted)) throw invalid('on_admitted');
  if (runId !== undefined && !isValidId(runId)) throw invalid('run_id');
  if (!isSink(events)) throw invalid('events');
  return { userId, sessionId: sessionId ?? newSessionId(), message, durable: durable === true, signal, onAdmitted, runId, events };
}

/** A resume request after validation. */
export interface ValidResumeRequest {
  readonly userId: string;
  readonly sessionId: string;
  readonly invocationId: string;
  readonly callId: string | undefined;
  readonly decision: ConfirmationDecision | undefined;
  readonly confirmedBy: string | undefined;
  readonly signal: AbortSignal | undefined;
  readonly onAdmitted: ResumeRequest['onAdmitted'];
  readonly runId: string | undefined;
  readonly events: TelemetrySink | undefined;
}

/**
 * Step 1 of a resume (spec 03 §7): `confirmed` a boolean and `payload` JSON-safe, storable (no
 * U+0000, no lone surrogate: {@link storableJsonText}) and within the policy's `maxContentBytes`
 * (64 KiB without a policy), else `resume_input_required {field}`.
 */
export function checkResumeInput(options: ResolvedRunnerOptions, input: { confirmed: unknown; payload?: unknown }): ConfirmationDecision {
  if (typeof input !== 'object' || input === null || typeof input.confirmed !== 'boolean') throw new RunnerError('resume_input_required', { field: 'confirmed' });
  if (input.payload === undefined) return { confirmed: input.confirmed };
  const limit = options.policy?.maxContentBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
  let payload: JsonValue;
  try {
    if (measure(input.payload, limit).exceeded || storableJsonText(input.payload) === undefined) throw new RunnerError('resume_input_required', { field: 'payload' });
    payload = frozenJsonCopy(input.payload as JsonValue);
  } catch {
    throw new RunnerError('resume_input_required', { field: 'payload' });
  }
  return { confirmed: input.confirmed, payload };
}

/** Validates `resumeAsync`'s request: ids first, then the decision of a confirmation resume. */
export function validateResumeRequest(options: ResolvedRunnerOptions, request: unknown): ValidResumeRequest {
  if (typeof request !== 'object' || request === null) throw invalid('request');
  const { userId, sessionId, invocationId, callId, confirmed, payload, confirmedBy, signal, onAdmitted, runId, events } = request as ResumeRequest;
  if (!isValidId(userId)) throw invalid('user_id');
  if (!isTokenId(sessionId)) throw invalid('session_id');
  if (!isInvocationId(invocationId)) throw invalid('invocation_id');
  if (callId !== undefined && !isTokenId(callId)) throw invalid('call_id');
  if (!isSignal(signal)) throw invalid('signal');
  if (!isCallback(onAdmitted)) throw invalid('on_admitted');
  if (callId === undefined && (confirmed !== undefined || payload !== undefined || confirmedBy !== undefined)) throw invalid('call_id');
  if (confirmedBy !== undefined && !isValidId(confirmedBy)) throw invalid('confirmed_by');
  if (runId !== undefined && !isValidId(runId)) throw invalid('run_id');
  if (!isSink(events)) throw invalid('events');
  const decision = callId === undefined ? undefined : checkResumeInput(options, { confirmed, payload });
  return { userId, sessionId, invocationId, callId, decision, confirmedBy, signal, onAdmitted, runId, events };
}
