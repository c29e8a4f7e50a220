import { AgentRuntimeError, type ErrorDetails } from '../shared/errors/agent-runtime-error';

/** Every code a {@link ClusterError} carries (spec 08 §2, §5). */
export type ClusterErrorCode =
  /** Bad cluster options (`details.field`). */
  | 'invalid_cluster_options'
  /** Another live session holds this instance id's lock. */
  | 'cluster_instance_id_in_use'
  /** The database could not be reached or answered with an error (`details.sqlstate`/`details.errno` only). */
  | 'cluster_unavailable'
  /** A cluster table does not match its specification (`details.mismatches`). */
  | 'schema_mismatch';

/** The error of the cluster's shared parts: a code, and details without ids, SQL or database text. */
export class ClusterError extends AgentRuntimeError<ClusterErrorCode> {
  constructor(code: ClusterErrorCode, details?: ErrorDetails) {
    super('ClusterError', code, details);
  }

  /** Brand check that runs no user code. */
  static isClusterError(value: unknown): value is ClusterError {
    return AgentRuntimeError.isAgentRuntimeError(value, ClusterError);
  }
}
