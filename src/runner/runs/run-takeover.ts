import { handled } from '../../shared/async/handled-promise';
import type { Clock } from '../../shared/time/clock';
import { sleep } from '../../shared/time/timeout';
import type { TelemetrySink } from '../../telemetry/telemetry-sink';
import { resumeTakenOver } from './run-driver';
import type { RunExecutions } from './run-executions';
import { ownerLostEnding } from './run-outcome';
import type { RegistryRunner } from './run-registry.types';
import type { StoredRun } from './stores/run-store';
import { EXECUTING, type RunWriter } from './run-writer';

/** What a registry lends to take over runs. */
export interface TakeoverParts {
  readonly runners: ReadonlyMap<string, RegistryRunner>;
  readonly executions: RunExecutions;
  readonly writer: RunWriter;
  readonly clock: Clock;
  readonly telemetry: { readonly events?: TelemetrySink };
}

/**
 * A run of a shared store whose owner instance died, now owned here (spec 08 §4): a durable run
 * with an invocation is resumed from its ledger checkpoint (its stream goes on with new items);
 * any other ends `failed` with `owner_lost`.
 */
export function takeOverOrphan(run: StoredRun, parts: TakeoverParts): void {
  const runner = parts.runners.get(run.agent);
  const invocationId = run.invocation_id;
  if (run.durable && invocationId !== null && runner) {
    const { user_id: userId, session_id: sessionId, run_id: runId } = run;
    parts.executions.launch(runId, false, (signal, onAdmitted) =>
      resumeTakenOver(
        () => runner.resumeAsync({ userId, sessionId, invocationId, runId, signal, onAdmitted, ...parts.telemetry }),
        (ms) => sleep(ms, parts.clock, signal),
      ),
    );
    return;
  }
  endOwnerLost(run, parts);
}

/**
 * A pending or running run owned here whose invocation does not execute here (the store's
 * reconciler found it twice): its end was never written, so it ends `failed` with `owner_lost
 * {reason: 'execution_lost'}`, repeated until the write lands.
 */
export function endAbandoned(run: StoredRun, parts: TakeoverParts): void {
  endOwnerLost(run, parts, 'execution_lost');
}

function endOwnerLost(run: StoredRun, parts: TakeoverParts, reason?: 'execution_lost'): void {
  void handled(parts.executions.persist(() => parts.writer.end(run.run_id, ownerLostEnding(reason), EXECUTING, true)));
}
