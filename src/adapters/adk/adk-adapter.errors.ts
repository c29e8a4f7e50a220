import { AgentRuntimeError, type ErrorDetails } from '../../shared/errors/agent-runtime-error';

/**
 * Every code an {@link AdkAdapterError} carries: problems with the `@google/adk` peer itself.
 *
 * @example
 * const hint: Record<AdkAdapterErrorCode, string> = { adk_peer_missing: 'install it', adk_peer_unsupported: 'use ~2.0.0' };
 */
export type AdkAdapterErrorCode = 'adk_peer_missing' | 'adk_peer_unsupported';

/**
 * The error of the `nest-agent-runtime/adk` entry point when the optional peer `@google/adk` cannot
 * serve it: not installed (`adk_peer_missing`), or a version outside `~2.0.0`
 * (`adk_peer_unsupported`, `details.version`). Everything that happens during a run is a
 * `RunnerError`, as with the package's own Runner.
 *
 * @example
 * try {
 *   new AdkRunnerFacade({ appName: 'app', agent, sessionService });
 * } catch (error) {
 *   if (error instanceof AdkAdapterError && error.code === 'adk_peer_missing') console.error('npm install @google/adk@~2.0.0');
 * }
 */
export class AdkAdapterError extends AgentRuntimeError<AdkAdapterErrorCode> {
  constructor(code: AdkAdapterErrorCode, details?: ErrorDetails) {
    super('AdkAdapterError', code, details);
  }
}
