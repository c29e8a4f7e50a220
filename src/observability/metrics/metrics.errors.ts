import { AgentRuntimeError, type ErrorDetails } from '../../shared/errors/agent-runtime-error';

/** Every code a {@link MetricsError} carries. */
export type MetricsErrorCode = 'invalid_metrics_options';

/** The error of the metrics module: a code and the names of the options that failed (`details.field`/`fields`). */
export class MetricsError extends AgentRuntimeError<MetricsErrorCode> {
  constructor(code: MetricsErrorCode, details?: ErrorDetails) {
    super('MetricsError', code, details);
  }

  /** Brand check that runs no user code. */
  static isMetricsError(value: unknown): value is MetricsError {
    return AgentRuntimeError.isAgentRuntimeError(value, MetricsError);
  }
}
