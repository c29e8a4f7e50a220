import type { Agent } from './agent.types';
import { discardInvocationContinuations } from './durable/continuation-store';
import { invocationStream } from './invocation/invocation-lifecycle';
import { takeInvocationTurn } from './invocation/invocation-queue';
import { resumeBody } from './invocation/invocation-resume';
import { InvocationScope } from './invocation/invocation-scope';
import { startBody } from './invocation/invocation-start';
import { checkResumeInput, validateResumeRequest, validateRunRequest } from './invocation/invocation-request';
import { resolveRunnerOptions, type ResolvedRunnerOptions } from './runner-options';
import { RunnerError } from './runner.errors';
import type { ResumeRequest, RunnerOptions, RunRequest, RunResult, RunStream } from './runner.types';
import type { SessionService } from './session.types';
import { isTokenId, isValidId } from '../shared/ids/id-rule';
import { endPausedRecord } from './durable/paused-record';

/**
 * The package's agent loop with the ordering contract of spec 03 §6 around every model call, tool
 * call, plugin and human confirmation: admission first, the agent check on the original input,
 * the effective-input recheck before anything is stored, tool checks before callbacks and
 * confirmation, result and output budgets, one audit event per denial, release on every path.
 *
 * @example
 * const runner = new Runner({ appName: 'support', agent, sessionService: new InMemorySessionService() });
 * const result = await runner.run({ userId: 'u-1', message: 'What is the weather in Oslo?' });
 */
export class Runner {
  readonly #options: ResolvedRunnerOptions;

  /** Validates `options` synchronously; any problem throws a `RunnerError`. */
  constructor(options: RunnerOptions) {
    this.#options = resolveRunnerOptions(options);
  }

  /** The application name sessions are stored under. */
  get appName(): string {
    return this.#options.appName;
  }

  /** The root agent as given. */
  get agent(): Agent {
    return this.#options.root.agent;
  }

  /** The session service as given, so a holder of the Runner can read and delete the sessions it ran. */
  get sessionService(): SessionService {
    return this.#options.sessionService;
  }

  /**
   * One invocation: yields each event once stored and returns `{status, invocation_id, session_id,
   * output?, pending_call_ids?}`, or throws `RunnerError`. Closing the generator early cancels it.
   */
  runAsync(request: RunRequest): RunStream {
    const options = this.#options;
    return (async function* () {
      const valid = validateRunRequest(options, request);
      const scope = new InvocationScope(options, valid.userId, valid.sessionId, undefined, valid.runId, valid.events);
      return yield* invocationStream(scope, startBody(scope, valid.message, valid.durable, valid.onAdmitted), valid.signal);
    })();
  }

  /** `runAsync` drained: the result alone. */
  run(request: RunRequest): Promise<RunResult> {
    return drain(this.runAsync(request));
  }

  /**
   * Continues a paused invocation with a human's decision on one call (`callId`, `confirmed`,
   * `payload?`), or a durable invocation from its ledger checkpoint (no `callId`), under the same
   * invocation id (spec 03 §7–§8).
   */
  resumeAsync(request: ResumeRequest): RunStream {
    const options = this.#options;
    return (async function* () {
      const valid = validateResumeRequest(options, request);
      const release = await takeInvocationTurn(valid.invocationId);
      try {
        const scope = new InvocationScope(options, valid.userId, valid.sessionId, valid.invocationId, valid.runId, valid.events);
        return yield* invocationStream(scope, resumeBody(scope, { callId: valid.callId, decision: valid.decision, confirmedBy: valid.confirmedBy, onAdmitted: valid.onAdmitted }), valid.signal);
      } finally {
        release();
      }
    })();
  }

  /** `resumeAsync` drained. */
  resume(request: ResumeRequest): Promise<RunResult> {
    return drain(this.resumeAsync(request));
  }

  /** Step 1 of a resume alone, synchronously: throws `resume_input_required {field}` for a bad decision. */
  checkResumeInput(input: { confirmed: unknown; payload?: unknown }): void {
    checkResumeInput(this.#options, input);
  }

  /**
   * Drops the pending confirmations of a paused invocation (its run was cancelled) and, with a
   * ledger, ends its `paused` ledger row `cancelled` (`error_code: 'cancelled'`); the dropped call ids.
   */
  async discardContinuations(ref: { userId: string; sessionId: string; invocationId: string }): Promise<readonly string[]> {
    if (!isValidId(ref?.userId) || !isTokenId(ref.sessionId)) throw new RunnerError('invalid_run_request', { field: 'session_id' });
    let dropped: readonly string[];
    try {
      dropped = await discardInvocationContinuations(this.#options.sessionService, { appName: this.#options.appName, userId: ref.userId, sessionId: ref.sessionId }, ref.invocationId);
    } catch (error) {
      if (RunnerError.isRunnerError(error)) throw error;
      throw new RunnerError('session_store_failed', { operation: 'update_state' });
    }
    await endPausedRecord(this.#options, ref.invocationId);
    return dropped;
  }
}


async function drain(stream: RunStream): Promise<RunResult> {
  for (;;) {
    const next = await stream.next();
    if (next.done === true) return next.value;
  }
}
