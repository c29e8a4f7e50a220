import { RunnerError } from '../../runner/runner.errors';
import { optionFailureDetails, readOptions } from '../../shared/options/option-reader';
import { systemClock, type Clock } from '../../shared/time/clock';
import { EvalServiceError } from '../eval.errors';
import type { EvalCaseResult, EvalExecution, EvalExecutor, EvalTaskOutcome } from '../eval.types';
import { runEvalCase, type EvalRunner } from './case-run';
import { buildCaseResult, buildEvalResult } from './eval-result';

/** Where the executor finds the Runner of an agent: a `RunRegistry` fits (spec 03 §9). */
export interface EvalRunnerRegistry {
  /** The Runner new runs of `agent` use; throws `RunnerError('agent_not_found')` for an unknown agent. */
  getRunner(agent: string): EvalRunner;
}

/** `unknown_eval_agent` when `registry` has no Runner for `agent` (no registry: nothing to check). */
export function assertKnownAgent(registry: EvalRunnerRegistry | undefined, agent: string): void {
  if (registry === undefined) return;
  try {
    registry.getRunner(agent);
  } catch {
    throw new EvalServiceError('unknown_eval_agent');
  }
}

/** Dependencies of a {@link LocalEvalExecutor}. */
export interface LocalEvalExecutorDeps {
  /** Drives `case_timeout_ms`. @default systemClock */
  readonly clock?: Clock;
}

const hasTimers = (clock: unknown): boolean => typeof (clock as Clock | null)?.setTimer === 'function' && typeof (clock as Clock).clearTimer === 'function';

/**
 * The `'local'` worker (spec 05 §7): runs a job's cases one after another through the Runner the
 * registry holds for the job's agent, and scores them. Each case is a fresh invocation in its own
 * session (`<job id>-<index>`), bounded by the job's signal and `case_timeout_ms`, and its session is
 * deleted afterwards. A case that fails (`case_timeout`, `run_paused`, a Runner code) scores 0 and the
 * job goes on; an abort of the job's signal ends the job and discards every case result.
 *
 * @example
 * const executor = new LocalEvalExecutor(registry);
 * const outcome = await executor.start(job, controller.signal);
 * if (outcome.status === 'completed') console.log(outcome.result.passed);
 */
export class LocalEvalExecutor implements EvalExecutor {
  readonly #registry: EvalRunnerRegistry;
  readonly #clock: Clock;

  /**
   * `registry` is a `RunRegistry` or anything with its `getRunner(agent)`; `deps` a plain object whose
   * `clock` has `setTimer` and `clearTimer`. Throws `invalid_eval_service_options`
   * (`{field: 'registry' | 'deps' | 'clock'}`) for anything else.
   */
  constructor(registry: EvalRunnerRegistry, deps: LocalEvalExecutorDeps = {}) {
    if (typeof registry?.getRunner !== 'function') throw new EvalServiceError('invalid_eval_service_options', { field: 'registry' });
    const read = readOptions(deps, { clock: hasTimers }, { name: 'deps', unknownKeys: 'ignore' });
    if (!read.ok) throw new EvalServiceError('invalid_eval_service_options', optionFailureDetails(read.fields));
    this.#registry = registry;
    this.#clock = (read.values.clock as Clock | undefined) ?? systemClock;
  }

  /**
   * Starts `job` and returns at once the promise of its outcome: `{status: 'completed', result}`, or
   * `{status: 'error', reason: 'unknown_eval_agent'}` when the registry no longer knows the agent. It
   * rejects with `signal.reason` once `signal` aborts; nothing partial is reported.
   */
  start(job: EvalExecution, signal: AbortSignal): Promise<EvalTaskOutcome> {
    return this.#run(job, signal);
  }

  async #run(job: EvalExecution, signal: AbortSignal): Promise<EvalTaskOutcome> {
    const cases: EvalCaseResult[] = [];
    for (const [index, evalCase] of job.set.cases.entries()) {
      signal.throwIfAborted();
      const runner = this.#runnerOf(job.agent);
      if (runner === null) return { status: 'error', reason: 'unknown_eval_agent' };
      const run = await runEvalCase(runner, {
        sessionId: `${job.job_id}-${index}`,
        input: evalCase.input,
        jobSignal: signal,
        caseTimeoutMs: job.options.case_timeout_ms,
        clock: this.#clock,
      });
      cases.push(buildCaseResult(evalCase, job.metrics, run));
    }
    signal.throwIfAborted();
    return { status: 'completed', result: buildEvalResult(job.metrics, cases) };
  }

  /** Looked up per case, as new runs would: a registry whose runners were replaced serves the new one. */
  #runnerOf(agent: string): EvalRunner | null {
    try {
      return this.#registry.getRunner(agent);
    } catch (error) {
      if (RunnerError.isRunnerError(error) && error.code === 'agent_not_found') return null;
      throw error;
    }
  }
}
