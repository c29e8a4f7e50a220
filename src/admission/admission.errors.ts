import type { HttpErrorRule } from '../http/http-error-mapper';
import { AgentRuntimeError, type ErrorDetails } from '../shared/errors/agent-runtime-error';

const ADMISSION_ERROR_CODES = Object.freeze([
  'invalid_admission_control_config',
  'invalid_admission_options',
  'invalid_agent_id',
  'invalid_tenant_id',
  'concurrency_limit_reached',
  'admission_queue_full',
  'queue_deadline_exceeded',
  'deployment_draining',
  'owner_down',
  'cancelled',
  'await_timeout',
  'invalid_await',
  'not_found',
  'invalid_request_ref',
  'invalid_permit',
  'drain_timeout',
  'invalid_drain_timeout',
  'permit_revoked',
  // flow control (spec 09 §10)
  'rate_limited',
  'invalid_settle',
  'invalid_report',
  // cluster mode (spec 08 §3, §5)
  'admission_store_unavailable',
  'cluster_config_mismatch',
] as const);

/** Every code an {@link AdmissionError} carries (spec 01 §7). */
export type AdmissionErrorCode = (typeof ADMISSION_ERROR_CODES)[number];

const CLIENT_CLOSED_REQUEST = 499;
const FAULT: HttpErrorRule = { status: 500 };

/** The error of the admission controller: a code, and details that never carry input, refs or ids. */
export class AdmissionError extends AgentRuntimeError<AdmissionErrorCode> {
  /** Every code of {@link AdmissionErrorCode}. */
  static readonly codes: readonly AdmissionErrorCode[] = ADMISSION_ERROR_CODES;

  /**
   * The HTTP answer of each code (spec 01 §12, spec 08 §3); the Runner answers its `admission_failed`
   * by the rule of its reason here. Configuration and handle misuse are faults of the application.
   */
  static readonly httpAnswers: { readonly [C in AdmissionErrorCode]: HttpErrorRule } = Object.freeze({
    concurrency_limit_reached: { status: 429, retryAfter: true, details: ['limit_scope', 'limit_kind'] },
    admission_queue_full: { status: 429, retryAfter: true },
    // Retry-After carries ceil(retry_after_ms / 1000) seconds (spec 09 §5)
    rate_limited: { status: 429, retryAfter: true, details: ['limit_scope', 'retry_after_ms'] },
    queue_deadline_exceeded: { status: 503, retryAfter: true },
    deployment_draining: { status: 503, retryAfter: true },
    admission_store_unavailable: { status: 503, retryAfter: true },
    cancelled: { status: CLIENT_CLOSED_REQUEST },
    owner_down: { status: CLIENT_CLOSED_REQUEST },
    permit_revoked: { status: CLIENT_CLOSED_REQUEST },
    invalid_agent_id: { status: 400 },
    invalid_tenant_id: { status: 400 },
    not_found: { status: 404 },
    await_timeout: { status: 504 },
    drain_timeout: { status: 504 },
    invalid_admission_options: FAULT,
    invalid_admission_control_config: FAULT,
    invalid_await: FAULT,
    invalid_request_ref: FAULT,
    invalid_permit: FAULT,
    invalid_settle: FAULT,
    invalid_report: FAULT,
    invalid_drain_timeout: FAULT,
    cluster_config_mismatch: FAULT,
  });

  constructor(code: AdmissionErrorCode, details?: ErrorDetails) {
    super('AdmissionError', code, details);
  }
}
