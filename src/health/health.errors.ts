import { AgentRuntimeError, type ErrorDetails } from '../shared/errors/agent-runtime-error';

/** Every code an {@link AgentRuntimeHealthError} carries. */
export type AgentRuntimeHealthErrorCode = 'invalid_health_options';

/** The error of the health module: bad module options, named by `{field}` or `{fields}`. */
export class AgentRuntimeHealthError extends AgentRuntimeError<AgentRuntimeHealthErrorCode> {
  constructor(code: AgentRuntimeHealthErrorCode, details?: ErrorDetails) {
    super('AgentRuntimeHealthError', code, details);
  }
}
