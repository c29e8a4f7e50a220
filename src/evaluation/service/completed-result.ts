import { EvalServiceError } from '../eval.errors';
import type { EvalJobRecord, EvalResult } from '../eval.types';

/** The result of a completed job; `result_not_ready` before its end, `evaluation_job_terminal` (`{phase, reason}`) for another end. */
export function completedResult(read: { readonly job: EvalJobRecord; readonly result: EvalResult | null }): EvalResult {
  const { job, result } = read;
  if (job.phase === 'completed' && result !== null) return result;
  if (job.phase === 'queued' || job.phase === 'running') throw new EvalServiceError('result_not_ready');
  throw new EvalServiceError('evaluation_job_terminal', { phase: job.phase, reason: job.reason });
}
