import type { HttpErrorTable } from '../http/http-error-mapper';
import { AgentRuntimeError, type ErrorDetails } from '../shared/errors/agent-runtime-error';

const CLUSTER_ERROR_CODES = Object.freeze([
  // bad cluster options (`details.field`)
  'invalid_cluster_options',
  // another live session holds this instance id's lock
  'cluster_instance_id_in_use',
  // the database could not be reached or answered with an error (`details.sqlstate`/`details.errno` only)
  'cluster_unavailable',
  // a cluster table does not match its specification (`details.mismatches`)
  'schema_mismatch',
] as const);

/** Every code a {@link ClusterError} carries (spec 08 §2, §5). */
export type ClusterErrorCode = (typeof CLUSTER_ERROR_CODES)[number];

/** The error of the cluster's shared parts: a code, and details without ids, SQL or database text. */
export class ClusterError extends AgentRuntimeError<ClusterErrorCode> {
  /** Every code of {@link ClusterErrorCode}. */
  static readonly codes: readonly ClusterErrorCode[] = CLUSTER_ERROR_CODES;

  /**
   * The HTTP answer of each code: the shared database out of reach is an outage (503 with
   * `Retry-After`, its `details.reason` shown, as the ledger's); the start-up codes are faults of
   * the deployment (500 with the code only).
   */
  static readonly httpAnswers: HttpErrorTable<ClusterErrorCode> = Object.freeze({
    cluster_unavailable: { status: 503, retryAfter: true, details: ['reason'] },
    invalid_cluster_options: { status: 500 },
    cluster_instance_id_in_use: { status: 500 },
    schema_mismatch: { status: 500 },
  });

  constructor(code: ClusterErrorCode, details?: ErrorDetails) {
    super('ClusterError', code, details);
  }

  /** Brand check that runs no user code. */
  static isClusterError(value: unknown): value is ClusterError {
    return AgentRuntimeError.isAgentRuntimeError(value, ClusterError);
  }
}
