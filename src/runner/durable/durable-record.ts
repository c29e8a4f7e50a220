import type { InvocationLedger } from '../../ledger/invocation-ledger';
import type { InvocationRecord, TerminalPhase } from '../../ledger/invocation-record';
import { finishWithRetry } from '../../ledger/finish-retry';
import { LedgerError } from '../../ledger/ledger.errors';
import type { JsonValue } from '../content.types';
import type { InvocationScope } from '../invocation/invocation-scope';
import { RunnerError } from '../runner.errors';

/** One completed tool step as the ledger checkpoint records it: the stored, model-visible response. */
export interface CompletedStep {
  readonly step_id: string;
  readonly tool_name: string;
  readonly response: JsonValue;
}

/** The checkpoint a durable invocation writes (spec 04 §9). */
export interface RunnerCheckpoint {
  readonly schema_version: 1;
  readonly completed_steps: readonly CompletedStep[];
  readonly pending_call_ids: readonly string[];
}

const FENCE_CODES = new Set(['lease_expired', 'stale_owner']);

/** The ledger row of a durable invocation, owned while the invocation runs (spec 03 §8, 04 §9). */
export class DurableRecord {
  #steps: CompletedStep[];
  #timer: unknown = null;

  private constructor(
    private readonly ledger: InvocationLedger,
    private readonly scope: InvocationScope,
    private readonly token: string,
    checkpoint: unknown,
  ) {
    this.#steps = [...stepsOf(checkpoint)];
  }

  /** `createAndClaim` after admission, before any policy, plugin or model work. */
  static async open(ledger: InvocationLedger, scope: InvocationScope, agentName: string): Promise<DurableRecord> {
    const checkpoint: RunnerCheckpoint = { schema_version: 1, completed_steps: [], pending_call_ids: [] };
    const claimed = await ledgerCall(scope, () =>
      ledger.createAndClaim(scope.invocationId, { workflowId: agentName, workflowVersion: '1', kind: 'agent_run' }, checkpoint, { leaseMs: ledger.defaultLeaseMs }),
    );
    return new DurableRecord(ledger, scope, claimed.ownerToken, claimed.invocation.checkpoint).#renewing();
  }

  /** Claims the row of a paused or interrupted invocation for a resume (spec 04 §9 "Durable resume"). */
  static async reclaim(ledger: InvocationLedger, scope: InvocationScope, needsDecision: boolean): Promise<DurableRecord> {
    const row: InvocationRecord | null = await ledgerCall(scope, () => ledger.get(scope.invocationId));
    if (row === null) throw new RunnerError('invocation_not_found', {});
    if (row.phase === 'completed') throw new RunnerError('invocation_completed', {});
    if (row.phase === 'paused' && !needsDecision) throw new RunnerError('resume_input_required', { field: 'confirmed' });
    const claimed = await ledgerCall(scope, () => ledger.claim(scope.invocationId, { leaseMs: ledger.defaultLeaseMs }));
    return new DurableRecord(ledger, scope, claimed.ownerToken, claimed.invocation.checkpoint).#renewing();
  }

  /** Responses of the steps recorded as completed, by step (call) id. */
  recordedSteps(): ReadonlyMap<string, JsonValue> {
    return new Map(this.#steps.map((step) => [step.step_id, step.response]));
  }

  /** A checkpoint after a tool step passed the result check. */
  async stepCompleted(step: CompletedStep): Promise<void> {
    this.#steps.push(step);
    await ledgerCall(this.scope, () => this.ledger.checkpoint(this.scope.invocationId, this.token, this.#checkpoint([]), { leaseMs: this.ledger.defaultLeaseMs }));
  }

  /** `finish('paused')` with the pending confirmations in the checkpoint. */
  async pause(pendingCallIds: readonly string[]): Promise<void> {
    this.#stopRenewing();
    await ledgerCall(this.scope, () =>
      finishWithRetry(this.ledger, this.scope.invocationId, this.token, 'paused', { status: 'paused' }, this.#checkpoint(pendingCallIds), { clock: this.scope.options.clock }),
    );
  }

  /** The terminal finish; the outcome is content-free `{status, error_code?}`. */
  async finish(phase: TerminalPhase, errorCode: string | undefined): Promise<void> {
    this.#stopRenewing();
    const outcome = errorCode === undefined ? { status: phase } : { status: phase, error_code: errorCode };
    try {
      // bounded retries on the clock: a database blink at the end of a run must not leave the row running
      await finishWithRetry(this.ledger, this.scope.invocationId, this.token, phase, outcome, this.#checkpoint([]), { clock: this.scope.options.clock });
    } catch (error) {
      throw new RunnerError('ledger_failed', { reason: LedgerError.isLedgerError(error) ? error.code : 'ledger_unavailable' });
    }
  }

  stop(): void {
    this.#stopRenewing();
  }

  #checkpoint(pendingCallIds: readonly string[]): RunnerCheckpoint {
    return { schema_version: 1, completed_steps: this.#steps, pending_call_ids: pendingCallIds };
  }

  /**
   * Renews the lease every third of it until the invocation's signal aborts: an invocation that
   * ended (cancel, run timeout, lost fence) holds its row no longer than its lease even when its
   * finish never comes, so the sweep or a resume elsewhere can take it.
   */
  #renewing(): this {
    const { clock } = this.scope.options;
    const interval = Math.max(1, Math.floor(this.ledger.defaultLeaseMs / 3));
    const signal = this.scope.signal;
    if (signal.aborted) return this;
    signal.addEventListener('abort', () => this.#stopRenewing(), { once: true });
    const tick = () => {
      if (signal.aborted) return;
      this.#timer = clock.setTimer(tick, interval);
      this.ledger.renew(this.scope.invocationId, this.token, { leaseMs: this.ledger.defaultLeaseMs }).then(undefined, (error: unknown) => {
        // a database blink is retried on the next tick; only a lost fence ends the invocation
        if (LedgerError.isLedgerError(error) && FENCE_CODES.has(error.code)) this.#fenceLost();
      });
    };
    this.#timer = clock.setTimer(tick, interval);
    return this;
  }

  #stopRenewing(): void {
    if (this.#timer !== null) this.scope.options.clock.clearTimer(this.#timer);
    this.#timer = null;
  }

  #fenceLost(): void {
    this.#stopRenewing();
    this.scope.abort({ code: 'invocation_fence_lost' });
  }
}

/** A ledger call of the invocation: a lost fence ends it, any other failure is `ledger_failed {reason}`. */
async function ledgerCall<T>(scope: InvocationScope, work: () => Promise<T>): Promise<T> {
  scope.throwIfEnded();
  try {
    return await work();
  } catch (error) {
    scope.throwIfEnded();
    if (!LedgerError.isLedgerError(error)) throw new RunnerError('ledger_failed', { reason: 'ledger_unavailable' });
    if (FENCE_CODES.has(error.code)) {
      scope.abort({ code: 'invocation_fence_lost' });
      throw new RunnerError('invocation_fence_lost', {});
    }
    if (error.code === 'invocation_owned') throw new RunnerError('invocation_owned', {});
    if (error.code === 'completed') throw new RunnerError('invocation_completed', {});
    if (error.code === 'not_found') throw new RunnerError('invocation_not_found', {});
    throw new RunnerError('ledger_failed', { reason: error.code });
  }
}

function stepsOf(checkpoint: unknown): readonly CompletedStep[] {
  const steps = (checkpoint as { completed_steps?: unknown } | null)?.completed_steps;
  return Array.isArray(steps) ? (steps as CompletedStep[]).filter((step) => typeof step?.step_id === 'string') : [];
}
