import type { HttpException } from '@nestjs/common';
import { AgentRuntimeError } from '../shared/errors/agent-runtime-error';
import { httpErrorAnswer, httpErrorException, type HttpErrorTable } from '../http/http-error-mapper';
import { AdmissionError, type AdmissionErrorCode } from './admission.errors';

/** Body of an admission failure: `{status_code, error, code}`. */
export interface AdmissionErrorBody {
  readonly status_code: number;
  readonly error: string;
  readonly code: AdmissionErrorCode;
}

const CLIENT_CLOSED_REQUEST = 499;

/** HTTP answers of the admission codes a request can meet (spec 01 §12). */
export const ADMISSION_HTTP_ERRORS: HttpErrorTable<AdmissionErrorCode> = Object.freeze({
  concurrency_limit_reached: { status: 429, retryAfter: true },
  admission_queue_full: { status: 429, retryAfter: true },
  queue_deadline_exceeded: { status: 503, retryAfter: true },
  deployment_draining: { status: 503, retryAfter: true },
  admission_store_unavailable: { status: 503, retryAfter: true },
  cancelled: { status: CLIENT_CLOSED_REQUEST },
  owner_down: { status: CLIENT_CLOSED_REQUEST },
  invalid_agent_id: { status: 400 },
  invalid_admission_options: { status: 500 },
});

/**
 * The HTTP form of an admission failure (spec 01 §12): status, whether `Retry-After: 1` goes with
 * it, and the body. Anything that is not a mapped `AdmissionError` becomes a 500
 * `invalid_admission_options`, so no foreign error text reaches a client.
 */
export function admissionFailureResponse(error: unknown): { status: number; retryAfter: boolean; body: AdmissionErrorBody } {
  const mapped = AgentRuntimeError.isAgentRuntimeError(error, AdmissionError) && ADMISSION_HTTP_ERRORS[error.code] ? error : new AdmissionError('invalid_admission_options');
  return httpErrorAnswer(mapped, ADMISSION_HTTP_ERRORS) as { status: number; retryAfter: boolean; body: AdmissionErrorBody };
}

/** Throwable `HttpException` of {@link admissionFailureResponse}; the caller sets `Retry-After`. */
export function admissionHttpException(error: unknown): { exception: HttpException; retryAfter: boolean } {
  const answer = admissionFailureResponse(error);
  return { exception: httpErrorException(answer), retryAfter: answer.retryAfter };
}
