import type { ErrorDetails } from '../../shared/errors/agent-runtime-error';
import type { NewRunStreamItem, RunPatch, StoredRun } from './stores/run-store';
import type { RunError } from './run-registry.types';
import { RunnerError } from '../runner.errors';

/** How a run ended with an error, as its terminal item and status fields say it. */
export interface RunEnding {
  readonly terminal: NewRunStreamItem & { readonly type: 'terminal' };
  readonly patch: Omit<RunPatch, 'updated_at_ms'>;
}

const NO_DETAILS: ErrorDetails = Object.freeze({});

/** `{code, details}` of a `RunnerError`; anything else is `internal_error`, never its message. */
export function runErrorOf(error: unknown): RunError {
  if (!RunnerError.isRunnerError(error)) return Object.freeze({ code: 'internal_error', details: NO_DETAILS });
  return Object.freeze({ code: error.code, details: Object.freeze({ ...(error.details ?? {}) }) });
}

/** The terminal item and status of a cancelled run. */
export function cancelledEnding(reason: string): RunEnding {
  return {
    terminal: Object.freeze({ type: 'terminal', status: 'cancelled', cancelled: reason }),
    patch: { status: 'cancelled', pending_call_ids: [], error: Object.freeze({ code: 'cancelled', details: Object.freeze({ reason }) }) },
  };
}

/**
 * The ending of a run whose invocation threw: `cancelled` with the reason, `timed_out` for
 * `timeout`, `failed` for anything else (a foreign error as `internal_error`).
 */
export function errorEnding(error: unknown): RunEnding {
  const runError = runErrorOf(error);
  if (runError.code === 'cancelled') {
    const reason = runError.details.reason;
    return cancelledEnding(typeof reason === 'string' ? reason : 'cancelled');
  }
  const status = runError.code === 'timeout' ? 'timed_out' : 'failed';
  return { terminal: Object.freeze({ type: 'terminal', status, error: runError }), patch: { status, pending_call_ids: [], error: runError } };
}

/**
 * The terminal item and status of a run whose owner instance died and that cannot be resumed (spec
 * 08 §4), or, with `reason: 'execution_lost'`, whose invocation is gone from its live owner without
 * its end written (the store's reconciler found it).
 */
export function ownerLostEnding(reason?: 'execution_lost'): RunEnding {
  const details: ErrorDetails = reason === undefined ? {} : { reason };
  const error = Object.freeze({ code: 'owner_lost', details: Object.freeze(details) });
  return { terminal: Object.freeze({ type: 'terminal', status: 'failed', error }), patch: { status: 'failed', pending_call_ids: [], error } };
}

/** `run_not_active {status}` for a run that is not in the status an operation needs; `run_not_found` without one. */
export function notActive(run: StoredRun | undefined): RunnerError {
  return run ? new RunnerError('run_not_active', { status: run.status }) : new RunnerError('run_not_found');
}

/** What start and confirm answer once the registry's shutdown began. */
export function draining(): RunnerError {
  return new RunnerError('admission_failed', { reason: 'deployment_draining' });
}
