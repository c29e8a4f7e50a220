import type { HttpErrorTable } from '../../http/http-error-mapper';
import { AgentRuntimeError, type ErrorDetails } from '../../shared/errors/agent-runtime-error';

const METRICS_ERROR_CODES = Object.freeze(['invalid_metrics_options'] as const);

/** Every code a {@link MetricsError} carries. */
export type MetricsErrorCode = (typeof METRICS_ERROR_CODES)[number];

/** The error of the metrics module: a code and the names of the options that failed (`details.field`/`fields`). */
export class MetricsError extends AgentRuntimeError<MetricsErrorCode> {
  /** Every code of {@link MetricsErrorCode}. */
  static readonly codes: readonly MetricsErrorCode[] = METRICS_ERROR_CODES;

  /** The HTTP answer of each code: bad options are a fault of the application. */
  static readonly httpAnswers: HttpErrorTable<MetricsErrorCode> = Object.freeze({ invalid_metrics_options: { status: 500 } });

  constructor(code: MetricsErrorCode, details?: ErrorDetails) {
    super('MetricsError', code, details);
  }

  /** Brand check that runs no user code. */
  static isMetricsError(value: unknown): value is MetricsError {
    return AgentRuntimeError.isAgentRuntimeError(value, MetricsError);
  }
}
