import type { RunStatusRecord } from '../../runner/runs/run-registry.types';
import type { RunStore } from '../../runner/runs/stores/run-store';
import type { ConsoleConfirmation } from './console-snapshot.types';

/**
 * The pending calls of paused runs with their tool names, read from each run's replay buffer (the
 * `confirmation_requested` event of the call). Only the call id and the tool name are taken, never
 * the arguments or the hint. A run's answer is cached until its `last_seq` moves, so a paused run
 * costs one buffer read, not one per snapshot.
 */
export class PendingConfirmations {
  private readonly cache = new Map<string, { readonly lastSeq: number; readonly calls: readonly ConsoleConfirmation[] }>();

  constructor(private readonly store: RunStore | null) {}

  async of(runs: readonly RunStatusRecord[]): Promise<readonly ConsoleConfirmation[]> {
    const paused = runs.filter((run) => run.status === 'paused' && run.pending_call_ids.length > 0);
    for (const runId of this.cache.keys()) if (!paused.some((run) => run.run_id === runId)) this.cache.delete(runId);
    const calls: ConsoleConfirmation[] = [];
    for (const run of paused) calls.push(...(await this.callsOf(run)));
    return calls;
  }

  private async callsOf(run: RunStatusRecord): Promise<readonly ConsoleConfirmation[]> {
    const cached = this.cache.get(run.run_id);
    if (cached && cached.lastSeq === run.last_seq) return cached.calls;
    const tools = await this.toolNames(run.run_id);
    const calls = run.pending_call_ids.map((callId) => Object.freeze({ run_id: run.run_id, call_id: callId, tool: tools.get(callId) ?? null }));
    this.cache.set(run.run_id, { lastSeq: run.last_seq, calls });
    return calls;
  }

  private async toolNames(runId: string): Promise<ReadonlyMap<string, string>> {
    const names = new Map<string, string>();
    const page = this.store ? await this.store.itemsAfter(runId, 0).catch(() => undefined) : undefined;
    for (const item of page?.items ?? []) {
      if (item.type !== 'event' || item.event.kind !== 'confirmation_requested') continue;
      const content = item.event.content as { call_id?: unknown; tool?: unknown } | null;
      if (typeof content?.call_id === 'string' && typeof content.tool === 'string') names.set(content.call_id, content.tool);
    }
    return names;
  }
}
