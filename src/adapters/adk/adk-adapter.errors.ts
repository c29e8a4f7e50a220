import type { HttpErrorTable } from '../../http/http-error-mapper';
import { AgentRuntimeError, type ErrorDetails } from '../../shared/errors/agent-runtime-error';

const ADK_ADAPTER_ERROR_CODES = Object.freeze(['adk_peer_missing', 'adk_peer_unsupported'] as const);

/**
 * Every code an {@link AdkAdapterError} carries: problems with the `@google/adk` peer itself.
 *
 * @example
 * const hint: Record<AdkAdapterErrorCode, string> = { adk_peer_missing: 'install it', adk_peer_unsupported: 'use ~2.0.0' };
 */
export type AdkAdapterErrorCode = (typeof ADK_ADAPTER_ERROR_CODES)[number];

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
  /** Every code of {@link AdkAdapterErrorCode}. */
  static readonly codes: readonly AdkAdapterErrorCode[] = ADK_ADAPTER_ERROR_CODES;

  /** The HTTP answer of each code: a peer that is missing or of another version is a fault of the installation. */
  static readonly httpAnswers: HttpErrorTable<AdkAdapterErrorCode> = Object.freeze({
    adk_peer_missing: { status: 500 },
    adk_peer_unsupported: { status: 500 },
  });

  constructor(code: AdkAdapterErrorCode, details?: ErrorDetails) {
    super('AdkAdapterError', code, details);
  }
}
