import { AgentRuntimeError, type ErrorDetails } from '../shared/errors/agent-runtime-error';

/** Every code an {@link AdmissionError} carries (spec 01 §7). */
export type AdmissionErrorCode =
  | 'invalid_admission_control_config'
  | 'invalid_admission_options'
  | 'invalid_agent_id'
  | 'concurrency_limit_reached'
  | 'admission_queue_full'
  | 'queue_deadline_exceeded'
  | 'deployment_draining'
  | 'owner_down'
  | 'cancelled'
  | 'await_timeout'
  | 'invalid_await'
  | 'not_found'
  | 'invalid_request_ref'
  | 'invalid_permit'
  | 'drain_timeout'
  | 'invalid_drain_timeout'
  | 'permit_revoked'
  // cluster mode (spec 08 §3, §5)
  | 'admission_store_unavailable'
  | 'cluster_config_mismatch';

/** The error of the admission controller: a code, and details that never carry input, refs or ids. */
export class AdmissionError extends AgentRuntimeError<AdmissionErrorCode> {
  constructor(code: AdmissionErrorCode, details?: ErrorDetails) {
    super('AdmissionError', code, details);
  }
}
