import type { EvalJobRecord, PublicEvalJob } from '../eval.types';

/** The public form of a stored job (spec 05 §9): no result, no request content beyond the redacted metadata. */
export function publicEvalJob(record: EvalJobRecord): PublicEvalJob {
  return Object.freeze({
    job_id: record.job_id,
    scope: Object.freeze({ app: record.scope_app }),
    eval_set_id: record.eval_set_id,
    eval_set_version: record.eval_set_version,
    agent: record.agent,
    metadata: record.metadata,
    phase: record.phase,
    revision: record.revision,
    created_at_ms: record.created_at_ms,
    updated_at_ms: record.updated_at_ms,
    started_at_ms: record.started_at_ms,
    finished_at_ms: record.finished_at_ms,
    reason: record.reason,
  });
}
