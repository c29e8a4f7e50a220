import { HttpException } from '@nestjs/common';
import { AdmissionError, type AdmissionErrorCode } from './admission.errors';

/** Body of an admission failure: `{status_code, error, code}`. */
export interface AdmissionErrorBody {
  readonly status_code: number;
  readonly error: string;
  readonly code: AdmissionErrorCode;
}

interface HttpMapping {
  readonly status: number;
  readonly retryAfter: boolean;
}

const CLIENT_CLOSED_REQUEST = 499;

const MAPPING: Partial<Record<AdmissionErrorCode, HttpMapping>> = {
  concurrency_limit_reached: { status: 429, retryAfter: true },
  admission_queue_full: { status: 429, retryAfter: true },
  queue_deadline_exceeded: { status: 503, retryAfter: true },
  deployment_draining: { status: 503, retryAfter: true },
  cancelled: { status: CLIENT_CLOSED_REQUEST, retryAfter: false },
  owner_down: { status: CLIENT_CLOSED_REQUEST, retryAfter: false },
  invalid_agent_id: { status: 400, retryAfter: false },
  invalid_admission_options: { status: 500, retryAfter: false },
};

const REASON_PHRASES: Record<number, string> = {
  400: 'Bad Request',
  429: 'Too Many Requests',
  499: 'Client Closed Request',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/**
 * The HTTP form of an admission failure (spec 01 §12): status, whether `Retry-After: 1` goes with
 * it, and the body. Anything that is not a mapped `AdmissionError` becomes a 500
 * `invalid_admission_options`, so no foreign error text reaches a client.
 */
export function admissionFailureResponse(error: unknown): { status: number; retryAfter: boolean; body: AdmissionErrorBody } {
  const code = error instanceof AdmissionError && MAPPING[error.code] ? error.code : 'invalid_admission_options';
  const { status, retryAfter } = MAPPING[code] as HttpMapping;
  return { status, retryAfter, body: Object.freeze({ status_code: status, error: REASON_PHRASES[status], code }) };
}

/** Throwable `HttpException` of {@link admissionFailureResponse}; the caller sets `Retry-After`. */
export function admissionHttpException(error: unknown): { exception: HttpException; retryAfter: boolean } {
  const { status, retryAfter, body } = admissionFailureResponse(error);
  return { exception: new HttpException(body, status), retryAfter };
}
