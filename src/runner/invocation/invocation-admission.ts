import type { AdmissionRequestOptions } from '../../admission/admission-request';
import { AdmissionError } from '../../admission/admission.errors';
import { isOverloadStatus, isProviderOverloadError } from '../../admission/model-call-reports';
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
 * Whether a model call's error says the provider is overloaded: the Runner's `model_failed {status}`
 * with 429 or 503, or an SDK's error read by {@link isProviderOverloadError}.
 */
export function isOverloadedModelError(error: unknown): boolean {
  if (RunnerError.isRunnerError(error)) return error.code === 'model_failed' && isOverloadStatus(error.details?.status);
  return isProviderOverloadError(error);
}
