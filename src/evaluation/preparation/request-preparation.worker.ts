import { PREPARATION_PROBE, prepareEvalRequest, type PreparationReply, type PreparationTask } from './request-preparation';

/**
 * The piscina worker entry of the request preparation pool (its default export): answers the start
 * probe with itself and prepares every other task with {@link prepareEvalRequest}. What it returns
 * is plain data; it never throws for a request, so no error object or text crosses the thread boundary.
 */
export default function runPreparationTask(task: PreparationTask | typeof PREPARATION_PROBE): PreparationReply | typeof PREPARATION_PROBE {
  if (task === PREPARATION_PROBE) return PREPARATION_PROBE;
  const outcome = prepareEvalRequest(task.request, task.limits);
  return outcome.ok ? { ok: true, json: JSON.stringify(outcome.prepared) } : outcome;
}
