import { AdmissionError } from '../admission/admission.errors';
import { agentRuntimeErrorAnswer, httpErrorAnswer } from '../http/http-error-mapper';
import { RunnerError, type RunnerErrorCode } from './runner.errors';

/** The Runner's answer, as the exception filter finds it (the table of the error's class). */
const runnerHttpAnswer = (error: unknown) => (RunnerError.isRunnerError(error) ? agentRuntimeErrorAnswer(error) : undefined);
const answer = (code: RunnerErrorCode, details?: Record<string, string | number>) => runnerHttpAnswer(new RunnerError(code, details));

describe('RunnerError.httpAnswers (spec 03 §12)', () => {
  it.each([
    ['run_not_found', 404],
    ['agent_not_found', 404],
    ['session_not_found', 404],
    ['invocation_not_found', 404],
    ['invalid_run_request', 400],
    ['resume_input_required', 400],
    ['invocation_owned', 409],
    ['invocation_completed', 409],
    ['session_state_conflict', 409],
    ['run_not_active', 409],
    ['run_events_evicted', 410],
    ['run_capacity_reached', 503],
    ['runtime_policy_audit_persistence_failed', 503],
    ['model_failed', 502],
    ['plugin_failed', 500],
    ['invalid_plugin_amendment', 500],
    ['model_call_limit_exceeded', 500],
    ['ledger_failed', 500],
    ['session_store_failed', 500],
    ['invocation_fence_lost', 500],
    ['invalid_runner_options', 500],
    ['schema_mismatch', 500],
  ] as const)('%s answers %i in the package shape', (code, status) => {
    expect(answer(code)).toEqual({ status, retryAfter: status === 503, body: { status_code: status, error: expect.any(String), code } });
  });

  it('shows only the details each code declares', () => {
    expect(answer('invalid_run_request', { field: 'session_id', value: 'leak' })?.body).toEqual({ status_code: 400, error: 'Bad Request', code: 'invalid_run_request', details: { field: 'session_id' } });
    expect(answer('run_not_active', { status: 'completed' })?.body.details).toEqual({ status: 'completed' });
    expect(answer('run_events_evicted', { oldest_seq: 7 })?.body.details).toEqual({ oldest_seq: 7 });
    expect(answer('run_capacity_reached', { limit: 1024 })?.body.details).toEqual({ limit: 1024 });
    expect(answer('model_failed', { reason: 'http_status', status: 503 })?.body.details).toEqual({ reason: 'http_status', status: 503 });
    expect(answer('run_not_found', { run_id: 'run-x' })?.body).not.toHaveProperty('details');
  });

  it.each([
    ['concurrency_limit_reached', 429, true],
    ['admission_queue_full', 429, true],
    ['queue_deadline_exceeded', 503, true],
    ['deployment_draining', 503, true],
    ['cancelled', 499, false],
  ] as const)('admission_failed with reason %s answers as the admission table: %i', (reason, status, retryAfter) => {
    expect(answer('admission_failed', { reason })).toEqual({ status, retryAfter, body: { status_code: status, error: expect.any(String), code: 'admission_failed', details: { reason } } });
  });

  it('admission_failed wrapping rate_limited carries the Retry-After seconds and the refusing scope (spec 09 §10)', () => {
    const details = { reason: 'rate_limited', limit_scope: 'tenant', retry_after_ms: 2500 };
    expect(answer('admission_failed', details)).toEqual({
      status: 429,
      retryAfter: true,
      retryAfterSeconds: 3,
      body: { status_code: 429, error: 'Too Many Requests', code: 'admission_failed', details },
    });
  });

  it('admission_failed wrapping a cost refusal shows limit_scope and limit_kind', () => {
    const details = { reason: 'concurrency_limit_reached', limit_scope: 'agent', limit_kind: 'cost' };
    expect(answer('admission_failed', details)?.body.details).toEqual(details);
  });

  it('admission_failed with a reason that is no admission code is 500 without details', () => {
    expect(answer('admission_failed', { reason: 'hasOwnProperty' })).toEqual({ status: 500, retryAfter: false, body: { status_code: 500, error: 'Internal Server Error', code: 'admission_failed' } });
    expect(answer('admission_failed')?.status).toBe(500);
  });

  it('runtime_policy_denied is 403, or 413 for a budget, with the five-key summary only', () => {
    const summary = { decision_id: 'decision-1', policy_id: 'p', operation: 'content', outcome: 'deny', reason: 'content_budget_exceeded' };
    expect(answer('runtime_policy_denied', { ...summary, subject: 'secret_tool' })).toEqual({
      status: 413,
      retryAfter: false,
      body: { status_code: 413, error: 'Payload Too Large', code: 'runtime_policy_denied', details: summary },
    });
    expect(answer('runtime_policy_denied', { ...summary, reason: 'not_allowed' })?.status).toBe(403);
  });

  it('answers nothing for an error that is not a RunnerError', () => {
    expect(runnerHttpAnswer(new AdmissionError('cancelled'))).toBeUndefined();
    expect(runnerHttpAnswer(new Error('run_not_found'))).toBeUndefined();
    expect(runnerHttpAnswer({ code: 'run_not_found' })).toBeUndefined();
  });

  it('the table is frozen, and every answer is the one of the table given explicitly', () => {
    expect(Object.isFrozen(RunnerError.httpAnswers)).toBe(true);
    for (const code of RunnerError.codes) expect(answer(code)).toEqual(httpErrorAnswer(new RunnerError(code), RunnerError.httpAnswers));
  });
});
