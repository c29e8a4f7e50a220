import { AgentRuntimeError, type ErrorDetails } from '../shared/errors/agent-runtime-error';

const HEALTH_ERROR_CODES = Object.freeze(['invalid_health_options'] as const);

/** Every code an {@link AgentRuntimeHealthError} carries. */
export type AgentRuntimeHealthErrorCode = (typeof HEALTH_ERROR_CODES)[number];

/** The error of the health module: bad module options, named by `{field}` or `{fields}`. */
export class AgentRuntimeHealthError extends AgentRuntimeError<AgentRuntimeHealthErrorCode> {
  /** Every code of {@link AgentRuntimeHealthErrorCode}. */
  static readonly codes: readonly AgentRuntimeHealthErrorCode[] = HEALTH_ERROR_CODES;

  /** The HTTP answer of each code (the shape of `src/http`'s table, a sibling this kernel does not import): a fault of the application. */
  static readonly httpAnswers: { readonly [C in AgentRuntimeHealthErrorCode]: { readonly status: number } } = Object.freeze({
    invalid_health_options: { status: 500 },
  });

  constructor(code: AgentRuntimeHealthErrorCode, details?: ErrorDetails) {
    super('AgentRuntimeHealthError', code, details);
  }
}
