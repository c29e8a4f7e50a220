import { thrown as thrownBy } from '../../shared/testing/thrown';
import { ManualClock } from '../../shared/time/manual-clock';
import { TraceStore } from '../trace-store';
import type { TraceStoreOptions } from '../trace-store-options';
import { TraceStoreError } from '../trace-store.errors';

/** A store on a manual clock. */
export function setup(options: TraceStoreOptions = {}, clock: ManualClock = new ManualClock()) {
  const store = new TraceStore(options, { clock });
  return { clock, store };
}

/** The `TraceStoreError` `fn` throws synchronously. */
export const thrown = (fn: () => unknown): TraceStoreError => thrownBy<TraceStoreError>(fn, TraceStoreError);

/** An observability event (schema 1) of run `runId`, with extra metadata members. */
export function observability(runId: string, metadata: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { event: 'runner.tool.call', timestamp_ms: 1, metadata: { run_id: runId, ...metadata }, ...extra };
}

/** A run lifecycle event of run `runId`. */
export function lifecycle(runId: string, sequence = 1, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: 'run_started', sequence, timestamp: 1, workflow_id: runId, workflow_kind: 'agent_run', invocation_id: `inv-${runId}`, run_id: runId, ...extra };
}

/** Lets every pending `setImmediate` callback (receiver hand-offs, prune follow-ups) run. */
export const flushImmediates = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The cursors of a page's records. */
export const cursorsOf = (page: { events: readonly { cursor: number }[] }): number[] => page.events.map((record) => record.cursor);
