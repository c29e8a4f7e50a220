import type { Clock } from '../../shared/time/clock';
import { handled } from '../../shared/async/handled-promise';
import type { RunLifecycleTrace } from './run-lifecycle-trace';
import type { RunEnding } from './run-outcome';
import type { RunStatus } from './run-registry.types';
import type { AppendOutcome, NewRunStreamItem, RunPatch, RunStore, WriteOutcome } from './stores/run-store';

/** Statuses of a run whose invocation executes (or awaits admission). */
export const EXECUTING: readonly RunStatus[] = Object.freeze(['pending', 'running']);
export const PAUSED: readonly RunStatus[] = Object.freeze(['paused']);
export const RUNNING: readonly RunStatus[] = Object.freeze(['running']);

/** A patch before the writer stamps it with the time. */
export type UnstampedPatch = Omit<RunPatch, 'updated_at_ms'>;

/** What a write takes: the patch, the expected statuses, and whether only the owner may write (the invocation's own writes). */
export interface WriteOptions {
  readonly patch?: UnstampedPatch;
  readonly expect: readonly RunStatus[];
  /** @default false */
  readonly owned?: boolean;
}

/**
 * The registry's writes to its store: every patch stamped with the clock's wall time, the buffer
 * bound applied to each item, and a finished run's removal scheduled once its terminal item is written.
 */
export class RunWriter {
  constructor(
    readonly store: RunStore,
    private readonly clock: Clock,
    private readonly settings: { readonly maxBufferedItems: number; readonly finishedRunTtlMs: number },
    private readonly lifecycle: RunLifecycleTrace,
  ) {}

  /** Appends an item while the run has one of the `expect`ed statuses; a stored pause, resume or end is also a trace lifecycle event. */
  async append(runId: string, item: NewRunStreamItem, options: WriteOptions): Promise<AppendOutcome> {
    const patch = { ...options.patch, updated_at_ms: this.clock.wallNow() };
    const owned = options.owned === true ? { owned: true } : {};
    const outcome = await this.store.append(runId, item, { patch, expect: options.expect, keepItems: this.settings.maxBufferedItems, ...owned });
    if (outcome.written) this.lifecycle.appended(outcome.item, outcome.run);
    return outcome;
  }

  /** Changes status fields while the run has one of the `expect`ed statuses (and, when `owned`, is owned by this instance). */
  update(runId: string, patch: UnstampedPatch, expect: readonly RunStatus[], owned = false): Promise<WriteOutcome> {
    return this.store.update(runId, { ...patch, updated_at_ms: this.clock.wallNow() }, owned ? { expect, owned } : { expect });
  }

  /** Writes a terminal item; once written, the run is removed after `finishedRunTtlMs` (an `unref`'d timer on the system clock). */
  async end(runId: string, ending: RunEnding, expect: readonly RunStatus[], owned = false): Promise<AppendOutcome> {
    const outcome = await this.append(runId, ending.terminal, { patch: ending.patch, expect, owned });
    if (outcome.written) this.clock.setTimer(() => void handled(this.store.delete(runId)), this.settings.finishedRunTtlMs);
    return outcome;
  }
}
