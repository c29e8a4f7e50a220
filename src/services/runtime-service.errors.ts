import { AgentRuntimeError, type ErrorDetails } from '../shared/errors/agent-runtime-error';

/** Every code a {@link RuntimeServiceError} carries (spec 07 §7). */
export type RuntimeServiceErrorCode =
  // configuration
  | 'unknown_runtime_service_profile'
  | 'invalid_runtime_service_profile_config'
  | 'invalid_runtime_service_component_config'
  | 'invalid_memory_outbox_config'
  | 'invalid_memory_outbox_registry_options'
  | 'invalid_memory_outbox_poll_interval'
  | 'memory_outbox_runner_max_attempts_exceeded'
  // start
  | 'runtime_service_bundle_start_failed'
  // generation
  | 'runtime_service_bundle_unavailable'
  | 'runtime_service_profile_mismatch'
  | 'runtime_service_generation_stale'
  | 'memory_outbox_runtime_required'
  | 'runtime_service_child_down'
  | 'runtime_service_dependency_down'
  | 'runtime_service_dependency_unavailable'
  // routing
  | 'scope_router_overloaded'
  | 'max_active_scopes_reached'
  | 'scope_route_caller_unavailable'
  | 'timeout'
  | 'invalid_scope'
  | 'invalid_memory_scope'
  | 'artifact_shard_adapter_failed'
  | 'memory_shard_adapter_failed'
  // data
  | 'invalid_artifact'
  | 'artifact_too_large'
  | 'artifact_quota_exceeded'
  | 'artifact_list_limit_exceeded'
  | 'artifact_scan_limit_exceeded'
  | 'memory_content_too_large'
  | 'memory_quota_exceeded'
  | 'memory_epoch_fenced'
  | 'invalid_memory_request'
  // outbox
  | 'memory_outbox_job_too_large'
  | 'memory_outbox_capacity_reached'
  | 'memory_outbox_unavailable'
  // a database failure of a durable adapter or the outbox, with its SQLSTATE only
  | 'runtime_service_store_unavailable';

/**
 * The error of the runtime service bundle: a code and details that never carry artifact data,
 * memory content, filenames, scopes, paths, tokens or database text.
 */
export class RuntimeServiceError extends AgentRuntimeError<RuntimeServiceErrorCode> {
  constructor(code: RuntimeServiceErrorCode, details?: ErrorDetails) {
    super('RuntimeServiceError', code, details);
  }

  /** Brand check that runs no user code. */
  static isRuntimeServiceError(value: unknown): value is RuntimeServiceError {
    return AgentRuntimeError.isAgentRuntimeError(value, RuntimeServiceError);
  }
}
