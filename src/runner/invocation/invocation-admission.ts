import type { AdmissionRequestOptions } from '../../admission/admission-request';
import { AdmissionError } from '../../admission/admission.errors';
import type { Permit } from '../../admission/permit';
import type { ResolvedAdmission } from '../runner-options';
import type { AdmissionRunContext } from '../runner.types';
import { RunnerError } from '../runner.errors';

/** Detail keys of an admission refusal that an `admission_failed` carries on (spec 09 §10). */
const CARRIED_DETAILS = ['limit_scope', 'limit_kind', 'retry_after_ms'] as const;

/**
 * The request options of one invocation's acquire: the Runner's overflow and timeout, and its flow
 * options (tenant, cost, priority) fixed or resolved for this run. A resolver that throws is
 * `invalid_admission_options` (its exception text is never kept); the controller validates values.
 */
export function invocationRequest(admission: ResolvedAdmission, owner: AbortSignal, run: AdmissionRunContext): AdmissionRequestOptions {
  const request: Record<string, unknown> = { owner };
  if (admission.overflow !== undefined) request.overflow = admission.overflow;
  if (admission.queueTimeoutMs !== undefined) request.queueTimeoutMs = admission.queueTimeoutMs;
  for (const key of ['tenant', 'cost', 'priority'] as const) {
    const value = admission[key];
    if (value === undefined) continue;
    try {
      request[key] = typeof value === 'function' ? value(run) : value;
    } catch {
      throw new AdmissionError('invalid_admission_options', { field: key });
    }
  }
  return request as AdmissionRequestOptions;
}

/**
 * `admission_failed {reason}` for an admission failure, carrying the refused scope and the rate
 * limit's `retry_after_ms` when the controller gave them, so an HTTP answer sends the right
 * `Retry-After` and says which scope refused.
 */
export function admissionFailedError(error: unknown): RunnerError {
  if (!AdmissionError.isAgentRuntimeError(error, AdmissionError)) return new RunnerError('admission_failed', { reason: 'admission_unavailable' });
  const details: Record<string, string | number> = { reason: error.code };
  for (const key of CARRIED_DETAILS) {
    const value = error.details?.[key];
    if (typeof value === 'string' || typeof value === 'number') details[key] = value;
  }
  return new RunnerError('admission_failed', details);
}

/**
 * Reports the model calls of one invocation on its permit (spec 09 §6), at most once: the first
 * call the provider answered 429 or 503 as `overloaded` at once, else the last call as `ok` when the
 * invocation ends. A permit without `report` (a controller of the application's own) is left alone,
 * and a refused report (the permit already reported) is ignored.
 */
export class ModelCallReports {
  #permit: Permit | null = null;
  #reported = false;
  #lastLatencyMs: number | undefined;

  /** The invocation's permit, once granted. */
  attach(permit: Permit | null): void {
    this.#permit = permit;
  }

  /** A model call ended after `latencyMs`; `overloaded` when the provider answered 429 or 503. */
  modelCallEnded(latencyMs: number, overloaded: boolean): void {
    const elapsed = Math.max(0, latencyMs);
    if (overloaded) this.#report('overloaded', elapsed);
    else this.#lastLatencyMs = elapsed;
  }

  /** The invocation ended: reports `ok` for its last model call unless it reported already. */
  finish(): void {
    if (this.#lastLatencyMs !== undefined) this.#report('ok', this.#lastLatencyMs);
  }

  #report(outcome: 'ok' | 'overloaded', latencyMs: number): void {
    const permit = this.#permit;
    if (this.#reported || permit === null || typeof permit.report !== 'function') return;
    this.#reported = true;
    try {
      permit.report({ outcome, latencyMs });
    } catch {
      // reported already by the application, or a controller that refuses reports
    }
  }
}

/**
 * Whether a model call's error says the provider is overloaded: it answered 429 or 503. Read from
 * the Runner's `model_failed {status}`, or from the `status` / `statusCode` an SDK's error carries
 * (`@google/genai`'s `ApiError`, the AI SDK's `APICallError`, and its `RetryError`'s `lastError`).
 */
export function isOverloadedModelError(error: unknown): boolean {
  if (RunnerError.isRunnerError(error)) return error.code === 'model_failed' && isOverloadStatus(error.details?.status);
  if (typeof error !== 'object' || error === null) return false;
  const { status, statusCode, lastError } = error as { status?: unknown; statusCode?: unknown; lastError?: unknown };
  if (isOverloadStatus(status) || isOverloadStatus(statusCode)) return true;
  return lastError !== undefined && lastError !== error && typeof lastError === 'object' && lastError !== null && isOverloadStatus((lastError as { statusCode?: unknown }).statusCode);
}

function isOverloadStatus(status: unknown): boolean {
  return status === 429 || status === 503;
}
