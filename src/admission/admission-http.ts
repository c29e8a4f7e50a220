import { AgentRuntimeError } from '../shared/errors/agent-runtime-error';
import { httpErrorAnswer, type HttpErrorAnswer } from '../http/http-error-mapper';
import type { ErrorDetails } from '../shared/errors/agent-runtime-error';
import { AdmissionError, type AdmissionErrorCode } from './admission.errors';

/**
 * Body of an admission failure: `{status_code, error, code, details?}`; `details` says which scope
 * refused a 429 (`limit_scope`, with `limit_kind: 'cost'` or `retry_after_ms` where spec 09 adds them).
 */
export interface AdmissionErrorBody {
  readonly status_code: number;
  readonly error: string;
  readonly code: AdmissionErrorCode;
  readonly details?: ErrorDetails;
}

/**
 * The HTTP form of an admission failure (spec 01 §12, spec 09 §10): status, the `Retry-After` that
 * goes with it, and the body, by {@link AdmissionError.httpAnswers}. Anything that is not an `AdmissionError`
 * becomes a 500 `invalid_admission_options`, so no foreign error text reaches a client. The guard
 * throws it as an `HttpException` after setting `Retry-After`.
 */
export function admissionFailureResponse(error: unknown): HttpErrorAnswer<AdmissionErrorBody> {
  const mapped = AgentRuntimeError.isAgentRuntimeError(error, AdmissionError) ? error : new AdmissionError('invalid_admission_options');
  return httpErrorAnswer(mapped, AdmissionError.httpAnswers) as HttpErrorAnswer<AdmissionErrorBody>;
}
