import { emitSafely, type TelemetrySink } from '../../telemetry/telemetry-sink';
import { TelemetryEvents } from '../../telemetry/telemetry-events';
import type { EvalJobRecord } from '../eval.types';

/**
 * The `agent_runtime.evaluation.job` event of one committed transition (spec 05 §9): the phases, the
 * revision, the reason, the time spent in the previous phase and the service's counts; no job id,
 * scope or content.
 */
export function emitJobTransition(events: TelemetrySink | undefined, before: EvalJobRecord, after: EvalJobRecord, counts: { readonly activeJobs: number; readonly queuedJobs: number }): void {
  if (events === undefined) return;
  emitSafely(events, TelemetryEvents.evaluationJob, {
    from: before.phase,
    to: after.phase,
    revision: after.revision,
    reason: after.reason,
    duration_ms: Math.max(0, after.updated_at_ms - before.updated_at_ms),
    active_jobs: counts.activeJobs,
    queued_jobs: counts.queuedJobs,
  });
}
