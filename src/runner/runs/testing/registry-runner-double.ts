import type { RegistryRunner } from '../run-registry.types';
import { RunnerError } from '../../runner.errors';
import type { ResumeRequest, RunRequest, RunResult, RunStream } from '../../runner.types';
import type { SessionEvent } from '../../session.types';

type Step =
  | { readonly kind: 'admit'; readonly invocationId: string }
  | { readonly kind: 'event'; readonly event: SessionEvent }
  | { readonly kind: 'return'; readonly result: RunResult }
  | { readonly kind: 'throw'; readonly error: unknown };

/**
 * One invocation of a {@link RegistryRunnerDouble}, driven step by step by the test: nothing happens
 * until the test says `admit()`, `event()`, `complete()`, `pause()` or `fail()`. Like the Runner, an
 * abort of the request's signal makes the stream throw `RunnerError('cancelled', {reason})`, unless
 * `ignoreAbort` is set (a runner that does not stop).
 */
export class ScriptedInvocation {
  readonly stream: RunStream;
  /** The generator's `finally` ran (it ended, threw, or was closed by the consumer). */
  closed = false;
  ignoreAbort = false;
  private readonly steps: Step[] = [];
  private wake: (() => void) | undefined;
  private seq = 0;
  private invocationId = 'inv-test';

  constructor(
    readonly kind: 'run' | 'resume',
    readonly request: RunRequest | ResumeRequest,
  ) {
    if (kind === 'resume') this.invocationId = (request as ResumeRequest).invocationId;
    this.stream = this.generate();
  }

  /** Admission granted: calls `onAdmitted`. */
  admit(invocationId = this.invocationId): this {
    this.invocationId = invocationId;
    return this.push({ kind: 'admit', invocationId });
  }

  /** Yields one stored event. */
  event(kind: SessionEvent['kind'] = 'model_turn'): this {
    this.seq += 1;
    const event = Object.freeze({
      event_id: `evt-${this.seq}`,
      invocation_id: this.invocationId,
      session_id: this.request.sessionId ?? 'ses-unknown',
      seq: this.seq,
      author: 'agent',
      kind,
      content: Object.freeze({ text: `event ${this.seq}` }),
      created_at_ms: 1,
    }) as SessionEvent;
    return this.push({ kind: 'event', event });
  }

  complete(): this {
    return this.push({ kind: 'return', result: Object.freeze({ status: 'completed', invocation_id: this.invocationId, session_id: this.request.sessionId ?? '' }) });
  }

  pause(pendingCallIds: readonly string[]): this {
    return this.push({
      kind: 'return',
      result: Object.freeze({ status: 'paused', invocation_id: this.invocationId, session_id: this.request.sessionId ?? '', pending_call_ids: pendingCallIds }),
    });
  }

  fail(error: unknown): this {
    return this.push({ kind: 'throw', error });
  }

  private push(step: Step): this {
    this.steps.push(step);
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
    return this;
  }

  private async *generate(): RunStream {
    try {
      for (;;) {
        const step = await this.nextStep();
        if (step.kind === 'admit') this.request.onAdmitted?.({ invocation_id: step.invocationId });
        else if (step.kind === 'event') yield step.event;
        else if (step.kind === 'return') return step.result;
        else throw step.error;
      }
    } finally {
      this.closed = true;
    }
  }

  private nextStep(): Promise<Step> {
    const signal = this.request.signal;
    return new Promise<Step>((resolve, reject) => {
      const take = () => {
        if (signal?.aborted && !this.ignoreAbort) {
          reject(new RunnerError('cancelled', { reason: typeof signal.reason === 'string' ? signal.reason : 'cancelled' }));
          return;
        }
        const step = this.steps.shift();
        if (step) {
          signal?.removeEventListener('abort', take);
          resolve(step);
        } else {
          this.wake = take;
        }
      };
      signal?.addEventListener('abort', take, { once: true });
      take();
    });
  }
}

/**
 * A hand-written {@link RegistryRunner} for the registry's own tests: every `runAsync` and
 * `resumeAsync` call becomes a {@link ScriptedInvocation} the test drives.
 */
export class RegistryRunnerDouble implements RegistryRunner {
  readonly agent: { readonly name: string };
  readonly appName = 'test-app';
  readonly invocations: ScriptedInvocation[] = [];
  readonly discarded: Array<{ userId: string; sessionId: string; invocationId: string }> = [];
  /** Makes `discardContinuations` reject with this. */
  discardFailure: unknown;

  constructor(agentName = 'assistant') {
    this.agent = Object.freeze({ name: agentName });
  }

  runAsync(request: RunRequest): RunStream {
    return this.track('run', request).stream;
  }

  resumeAsync(request: ResumeRequest): RunStream {
    return this.track('resume', request).stream;
  }

  checkResumeInput(input: { readonly confirmed: unknown; readonly payload?: unknown }): void {
    if (typeof input.confirmed !== 'boolean') throw new RunnerError('resume_input_required', { field: 'confirmed' });
    if (input.payload !== undefined && JSON.stringify(input.payload).length > 64) throw new RunnerError('resume_input_required', { field: 'payload' });
  }

  async discardContinuations(ref: { userId: string; sessionId: string; invocationId: string }): Promise<void> {
    if (this.discardFailure !== undefined) throw this.discardFailure;
    this.discarded.push({ ...ref });
  }

  /** The latest invocation. */
  get last(): ScriptedInvocation {
    const last = this.invocations.at(-1);
    if (!last) throw new Error('no invocation yet');
    return last;
  }

  private track(kind: 'run' | 'resume', request: RunRequest | ResumeRequest): ScriptedInvocation {
    const invocation = new ScriptedInvocation(kind, request);
    this.invocations.push(invocation);
    return invocation;
  }
}
