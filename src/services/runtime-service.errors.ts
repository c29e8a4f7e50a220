import type { HttpErrorRule, HttpErrorTable } from '../http/http-error-mapper';
import { AgentRuntimeError, type ErrorDetails } from '../shared/errors/agent-runtime-error';

const RUNTIME_SERVICE_ERROR_CODES = Object.freeze([
  // configuration
  'unknown_runtime_service_profile',
  'invalid_runtime_service_profile_config',
  'invalid_runtime_service_component_config',
  'invalid_memory_outbox_config',
  'invalid_memory_outbox_registry_options',
  'invalid_memory_outbox_poll_interval',
  'memory_outbox_runner_max_attempts_exceeded',
  // start
  'runtime_service_bundle_start_failed',
  // generation
  'runtime_service_bundle_unavailable',
  'runtime_service_profile_mismatch',
  'runtime_service_generation_stale',
  'memory_outbox_runtime_required',
  'runtime_service_child_down',
  'runtime_service_dependency_down',
  'runtime_service_dependency_unavailable',
  // routing
  'scope_router_overloaded',
  'max_active_scopes_reached',
  'scope_route_caller_unavailable',
  'timeout',
  'invalid_scope',
  'invalid_memory_scope',
  'artifact_shard_adapter_failed',
  'memory_shard_adapter_failed',
  // data
  'invalid_artifact',
  'artifact_too_large',
  'artifact_quota_exceeded',
  'artifact_list_limit_exceeded',
  'artifact_scan_limit_exceeded',
  'memory_content_too_large',
  'memory_quota_exceeded',
  'memory_epoch_fenced',
  'invalid_memory_request',
  // outbox
  'memory_outbox_job_too_large',
  'memory_outbox_capacity_reached',
  'memory_outbox_unavailable',
  // a database failure of a durable adapter or the outbox, with its SQLSTATE only
  'runtime_service_store_unavailable',
] as const);

/** Every code a {@link RuntimeServiceError} carries (spec 07 §7). */
export type RuntimeServiceErrorCode = (typeof RUNTIME_SERVICE_ERROR_CODES)[number];

const OUTAGE: HttpErrorRule = { status: 503, retryAfter: true };
const BUSY: HttpErrorRule = { status: 503, retryAfter: true, details: ['limit'] };
const BAD_REQUEST: HttpErrorRule = { status: 400, details: ['field', 'fields'] };
const TOO_LARGE: HttpErrorRule = { status: 413, details: ['limit'] };
const OVER_LIMIT: HttpErrorRule = { status: 400, details: ['limit'] };
const QUOTA: HttpErrorRule = { status: 507, details: ['limit'] };
const FAULT: HttpErrorRule = { status: 500 };

/**
 * The error of the runtime service bundle: a code and details that never carry artifact data,
 * memory content, filenames, scopes, paths, tokens or database text.
 */
export class RuntimeServiceError extends AgentRuntimeError<RuntimeServiceErrorCode> {
  /** Every code of {@link RuntimeServiceErrorCode}. */
  static readonly codes: readonly RuntimeServiceErrorCode[] = RUNTIME_SERVICE_ERROR_CODES;

  /**
   * The HTTP answer of each code (spec 07 names none; these follow the other modules): a store, a
   * generation or a dependency that is down, stale or restarting is an outage, and a router or
   * outbox at capacity is busy, both 503 with `Retry-After`; a bad scope or request is 400, a value
   * too large 413, a quota 507 (as the evaluation store's), a fenced epoch 409, a caller that went
   * away 499, a timeout 504; configuration, start-up and an adapter's own exception are faults of
   * the application (500 with the code only).
   */
  static readonly httpAnswers: HttpErrorTable<RuntimeServiceErrorCode> = Object.freeze({
    unknown_runtime_service_profile: FAULT,
    invalid_runtime_service_profile_config: FAULT,
    invalid_runtime_service_component_config: FAULT,
    invalid_memory_outbox_config: FAULT,
    invalid_memory_outbox_registry_options: FAULT,
    invalid_memory_outbox_poll_interval: FAULT,
    memory_outbox_runner_max_attempts_exceeded: FAULT,
    runtime_service_bundle_start_failed: FAULT,
    runtime_service_profile_mismatch: FAULT,
    runtime_service_bundle_unavailable: OUTAGE,
    runtime_service_generation_stale: OUTAGE,
    memory_outbox_runtime_required: OUTAGE,
    runtime_service_child_down: OUTAGE,
    runtime_service_dependency_down: OUTAGE,
    runtime_service_dependency_unavailable: OUTAGE,
    scope_router_overloaded: BUSY,
    max_active_scopes_reached: BUSY,
    scope_route_caller_unavailable: { status: 499 },
    timeout: { status: 504 },
    invalid_scope: BAD_REQUEST,
    invalid_memory_scope: BAD_REQUEST,
    artifact_shard_adapter_failed: FAULT,
    memory_shard_adapter_failed: FAULT,
    invalid_artifact: BAD_REQUEST,
    artifact_too_large: TOO_LARGE,
    artifact_quota_exceeded: QUOTA,
    artifact_list_limit_exceeded: OVER_LIMIT,
    artifact_scan_limit_exceeded: OVER_LIMIT,
    memory_content_too_large: TOO_LARGE,
    memory_quota_exceeded: QUOTA,
    memory_epoch_fenced: { status: 409 },
    invalid_memory_request: BAD_REQUEST,
    memory_outbox_job_too_large: TOO_LARGE,
    memory_outbox_capacity_reached: BUSY,
    memory_outbox_unavailable: OUTAGE,
    runtime_service_store_unavailable: OUTAGE,
  });

  constructor(code: RuntimeServiceErrorCode, details?: ErrorDetails) {
    super('RuntimeServiceError', code, details);
  }

  /** Brand check that runs no user code. */
  static isRuntimeServiceError(value: unknown): value is RuntimeServiceError {
    return AgentRuntimeError.isAgentRuntimeError(value, RuntimeServiceError);
  }
}
