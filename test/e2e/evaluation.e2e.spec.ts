import { randomBytes } from 'node:crypto';
import type { HttpResult } from './support/http-client';
import { RecordingLogger } from './support/harness';
import { useReferenceService } from './support/reference-service';
import { EvaluationClient, expectError, longEvalRequest, REFERENCE_CASE_IDS, referenceEvalRequest } from './support/evaluation-client';

/** Long enough to stay `running` for many seconds on the reference runners (about 13 ms a case). */
const LONG_CASES = 1500;

/**
 * Spec 05 §10 over real sockets: the reference service as `npm start` wires it (its own fresh
 * database, `resolveScope` → `{app: 'reference'}`, `maxConcurrency` 2, `/evaluations` bodies up to 2 MiB).
 */
describe('evaluation routes of the reference service (spec 05 §10)', () => {
  const logger = new RecordingLogger();
  const service = useReferenceService(logger);
  const canary = `canary-${randomBytes(8).toString('hex')}`;
  /** Every answer a test saw to a client mistake: none may be a 5xx or carry the canary. */
  const mistakes: HttpResult[] = [];
  let client: EvaluationClient;
  beforeAll(() => {
    client = new EvaluationClient(service.http);
  });

  const refused = async (pending: Promise<HttpResult>): Promise<HttpResult> => {
    const result = await pending;
    if (result.status >= 400) mistakes.push(result);
    return result;
  };

  /** A completed job of `agent` over the reference eval set. */
  const completedReferenceJob = async (agent = 'helper'): Promise<string> => {
    const jobId = await client.submitted({ ...referenceEvalRequest(), agent });
    expect(await client.waitForPhase(jobId)).toMatchObject({ phase: 'completed', revision: 2 });
    return jobId;
  };

  /** Waits until the service runs no job and queues none (a slot is freed just after the terminal row is written). */
  const idle = async (): Promise<void> => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const ready = await service.http.send('/health/ready').result;
      const evaluation = ready.body?.details?.evaluation;
      if (evaluation?.active_jobs === 0 && evaluation?.queued_jobs === 0) return;
      if (Date.now() > deadline) throw new Error('the evaluation service did not become idle');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  describe('README walk-through', () => {
    test('submit, poll, read the result, store a baseline, evaluate a candidate and compare it with the baseline', async () => {
      const submitted = await client.submit(referenceEvalRequest());
      expect(submitted.status).toBe(201);
      const job = submitted.body.job;
      expect(job).toEqual({
        job_id: expect.stringMatching(/^eval-[0-9a-f]{32}$/),
        scope: { app: 'reference' },
        eval_set_id: 'reference-helper',
        eval_set_version: '1',
        agent: 'helper',
        metadata: { pipeline: 'readme', api_token: '[redacted]' },
        phase: 'running',
        revision: 1,
        created_at_ms: expect.any(Number),
        updated_at_ms: expect.any(Number),
        started_at_ms: expect.any(Number),
        finished_at_ms: null,
        reason: null,
      });
      expect(submitted.text).not.toContain('this value is redacted before it is stored');

      const done = await client.waitForPhase(job.job_id);
      expect(done).toMatchObject({ job_id: job.job_id, phase: 'completed', revision: 2, reason: null, finished_at_ms: expect.any(Number) });
      expect(done.finished_at_ms).toBeGreaterThanOrEqual(done.started_at_ms);

      const result = await client.result(job.job_id);
      expect(result.status).toBe(200);
      expect(result.body.result).toMatchObject({
        schema_version: 1,
        passed: true,
        metrics: {
          response_match: { score: expect.any(Number), threshold: 0.6, passed: true },
          tool_trajectory: { score: 1, threshold: 1, passed: true },
          tool_trajectory_in_order: { score: 1, threshold: 0.9, passed: true },
        },
      });
      expect(Object.keys(result.body.result.metrics).sort()).toEqual(['response_match', 'tool_trajectory', 'tool_trajectory_in_order']);
      expect(result.body.result.cases.map((item: { case_id: string }) => item.case_id)).toEqual([...REFERENCE_CASE_IDS]);
      expect(result.body.result.cases[0]).toMatchObject({ passed: true, error: null, actual_tool_calls: [{ name: 'search', args: { query: 'Where is the runbook?' } }] });

      const put = await client.putBaseline('reference-helper', 'main', { job_id: job.job_id });
      expect(put.status).toBe(200);
      expect(put.body.baseline).toMatchObject({ eval_set_id: 'reference-helper', name: 'main', job_id: job.job_id, created_at_ms: expect.any(Number), updated_at_ms: expect.any(Number) });
      const baseline = await client.getBaseline('reference-helper', 'main');
      expect(baseline.status).toBe(200);
      expect(baseline.body.baseline).toMatchObject({ eval_set_id: 'reference-helper', name: 'main', job_id: job.job_id, result: result.body.result });

      const draft = await client.submit({ ...referenceEvalRequest(), agent: 'helper-draft' });
      expect(draft.status).toBe(201);
      expect(draft.body.job).toMatchObject({ agent: 'helper-draft', eval_set_id: 'reference-helper' });
      expect(await client.waitForPhase(draft.body.job.job_id)).toMatchObject({ phase: 'completed' });
      const draftResult = await client.result(draft.body.job.job_id);
      expect(draftResult.body.result).toMatchObject({ passed: false, metrics: { response_match: { passed: true }, tool_trajectory: { score: 0, passed: false } } });

      const compared = await client.compare(draft.body.job.job_id, 'baseline=main');
      expect(compared.status).toBe(200);
      const report = compared.body.report;
      expect(report).toMatchObject({ schema_version: 1, regressed: true, tolerance: 0, baseline_job_id: job.job_id, candidate_job_id: draft.body.job.job_id });
      const regressedMetrics = Object.keys(report.metrics).filter((name) => report.metrics[name].regressed);
      expect(regressedMetrics.sort()).toEqual(['tool_trajectory', 'tool_trajectory_in_order']);
      expect(report.metrics.response_match).toMatchObject({ regressed: false, passed: true, delta: 0 });
      expect(report.metrics.tool_trajectory).toMatchObject({ baseline_score: 1, candidate_score: 0, delta: -1, passed: false, regressed: true });
      expect(report.cases.map((item: { case_id: string }) => item.case_id)).toEqual([...REFERENCE_CASE_IDS]);
      for (const item of report.cases) expect([...item.regressed_metrics].sort()).toEqual(['tool_trajectory', 'tool_trajectory_in_order']);
      expect(compared.text).not.toContain('runbook, section 2');

      const itself = await client.compare(job.job_id, 'baseline=main');
      expect(itself.status).toBe(200);
      expect(itself.body.report).toMatchObject({ regressed: false, baseline_job_id: job.job_id, candidate_job_id: job.job_id, cases: [] });

      const tolerant = await client.compare(draft.body.job.job_id, 'baseline=main&tolerance=1');
      expect(tolerant.body.report).toMatchObject({ regressed: true, tolerance: 1 });
    });

    test('a second PUT of the same baseline name moves it to another completed job of the set', async () => {
      const first = await completedReferenceJob();
      const second = await completedReferenceJob();
      expect((await client.putBaseline('reference-helper', 'moving', { job_id: first })).status).toBe(200);
      const moved = await client.putBaseline('reference-helper', 'moving', { job_id: second });
      expect(moved.status).toBe(200);
      expect(moved.body.baseline).toMatchObject({ name: 'moving', job_id: second });
      expect((await client.getBaseline('reference-helper', 'moving')).body.baseline.job_id).toBe(second);
    });

    test('a baseline stored under a name the store takes can be compared against under that name', async () => {
      const jobId = await completedReferenceJob();
      const name = encodeURIComponent('release 1.0 ü');
      expect((await client.putBaseline('reference-helper', name, { job_id: jobId })).body.baseline).toMatchObject({ name: 'release 1.0 ü', job_id: jobId });
      expect((await client.getBaseline('reference-helper', name)).status).toBe(200);
      const compared = await client.compare(jobId, `baseline=${name}`);
      expect({ status: compared.status, code: compared.body?.code }).toEqual({ status: 200, code: undefined });
      expect(compared.body.report).toMatchObject({ regressed: false, baseline_job_id: jobId });
    });
  });

  describe('codes over HTTP', () => {
    test('404 not_found for an unknown or ill-formed job id on every job route, and for an unknown baseline', async () => {
      const unknown = `eval-${'0'.repeat(32)}`;
      for (const id of [unknown, 'eval-XYZ', 'nope', `eval-${'A'.repeat(32)}`]) {
        expectError(await refused(client.status(id)), 404, 'not_found');
        expectError(await refused(client.result(id)), 404, 'not_found');
        expectError(await refused(client.cancel(id)), 404, 'not_found');
        expectError(await refused(client.compare(id, 'baseline=main')), 404, 'not_found');
      }
      expectError(await refused(client.putBaseline('reference-helper', 'x', { job_id: unknown })), 404, 'not_found');
      expectError(await refused(client.getBaseline('reference-helper', 'no-such-baseline')), 404, 'not_found');
      expectError(await refused(client.getBaseline('no-such-set', 'main')), 404, 'not_found');
    });

    test('a running and a queued job: 409 result_not_ready, 202 cancel, then 409 already_terminal, evaluation_job_terminal and eval_job_not_completed', async () => {
      const longA = longEvalRequest('long-a', LONG_CASES);
      expect(Buffer.byteLength(JSON.stringify(longA))).toBeGreaterThan(102_400);
      await idle();
      const a = await client.submit(longA);
      const b = await client.submit(longEvalRequest('long-b', LONG_CASES));
      const c = await client.submit(longEvalRequest('long-c', LONG_CASES));
      expect([a.status, b.status, c.status]).toEqual([201, 201, 201]);
      expect([a.body.job.phase, b.body.job.phase]).toEqual(['running', 'running']);
      expect(c.body.job).toMatchObject({ phase: 'queued', revision: 0, started_at_ms: null });
      const [idA, idB, idC] = [a.body.job.job_id, b.body.job.job_id, c.body.job.job_id] as string[];

      expectError(await refused(client.result(idA)), 409, 'result_not_ready');
      expectError(await refused(client.result(idC)), 409, 'result_not_ready');
      expectError(await refused(client.compare(idA, 'baseline=main')), 404, 'not_found');

      const cancelQueued = await client.cancel(idC);
      expect(cancelQueued.status).toBe(202);
      expect(cancelQueued.body.job).toMatchObject({ job_id: idC, phase: 'cancelled', reason: 'user_cancelled', revision: 1 });
      const cancelRunning = await client.cancel(idA);
      expect(cancelRunning.status).toBe(202);
      // the cancel of a running job answers at once; the outcome is written once the Runner work settled
      expect(cancelRunning.body.job).toMatchObject({ job_id: idA, phase: 'running' });
      expect((await client.cancel(idB)).status).toBe(202);
      expect(await client.waitForPhase(idA)).toMatchObject({ phase: 'cancelled', reason: 'user_cancelled', revision: 2 });
      expect(await client.waitForPhase(idB)).toMatchObject({ phase: 'cancelled', reason: 'user_cancelled' });

      expectError(await refused(client.cancel(idA)), 409, 'already_terminal', { phase: 'cancelled' });
      expectError(await refused(client.cancel(idC)), 409, 'already_terminal', { phase: 'cancelled' });
      expectError(await refused(client.result(idA)), 409, 'evaluation_job_terminal', { phase: 'cancelled', reason: 'user_cancelled' });
      expectError(await refused(client.putBaseline('long-a', 'main', { job_id: idA })), 409, 'eval_job_not_completed');
      expectError(await refused(client.putBaseline('long-c', 'main', { job_id: idC })), 409, 'eval_job_not_completed');
      expectError(await refused(client.getBaseline('long-a', 'main')), 404, 'not_found');

      const ready = await service.http.send('/health/ready').result;
      expect(ready.body.details.evaluation).toMatchObject({ status: 'up', active_jobs: 0, queued_jobs: 0 });
    }, 40_000);

    test('409 already_terminal on cancel of a completed job; 404 for a baseline naming a job of another set', async () => {
      const jobId = await completedReferenceJob();
      expectError(await refused(client.cancel(jobId)), 409, 'already_terminal', { phase: 'completed' });
      expect((await client.status(jobId)).body.job).toMatchObject({ phase: 'completed', revision: 2 });
      expectError(await refused(client.putBaseline('long-a', 'main', { job_id: jobId })), 404, 'not_found');
    });

    test('409 eval_set_revision_conflict for the same set id and version with other cases, and nothing is written', async () => {
      await completedReferenceJob();
      const before = await allJobIds(client);
      const changed = referenceEvalRequest();
      changed.set.cases[0].input = `${canary} Where is the runbook now?`;
      const conflict = await refused(client.submit(changed));
      expectError(conflict, 409, 'eval_set_revision_conflict');
      expect(await allJobIds(client)).toEqual(before);
      const renamed = referenceEvalRequest();
      renamed.set.version = `2-${randomBytes(4).toString('hex')}`;
      renamed.set.cases[0].input = `${canary} Where is the runbook now?`;
      expect((await client.submit(renamed)).status).toBe(201);
    });

    test('400 request codes: unknown fields with their keys, invalid set, metrics, agent, options and metadata, unknown agent', async () => {
      const base = (): Record<string, any> => ({ ...referenceEvalRequest(), metadata: { api_token: canary } });
      expectError(await refused(client.submit({ ...base(), extra: canary, other: 1 })), 400, 'unknown_eval_request_fields', { fields: ['extra', 'other'] });
      const noCases = base();
      noCases.set.cases = [];
      expectError(await refused(client.submit(noCases)), 400, 'invalid_eval_set', { reason: 'cases' });
      const badCase = base();
      badCase.set.cases[1] = { case_id: canary, input: 42 };
      expectError(await refused(client.submit(badCase)), 400, 'invalid_eval_set', { reason: 'input' });
      const duplicate = base();
      duplicate.set.cases[1].case_id = duplicate.set.cases[0].case_id;
      expectError(await refused(client.submit(duplicate)), 400, 'invalid_eval_set', { reason: 'duplicate_case_id' });
      expectError(await refused(client.submit({ ...base(), metrics: [{ name: canary }] })), 400, 'invalid_eval_metrics', { reason: 'name' });
      expectError(await refused(client.submit({ ...base(), metrics: [] })), 400, 'invalid_eval_metrics', { reason: 'metrics' });
      expectError(await refused(client.submit({ ...base(), metrics: [{ name: 'tool_trajectory', threshold: 2 }] })), 400, 'invalid_eval_metrics', { reason: 'threshold' });
      expectError(await refused(client.submit({ ...base(), agent: canary })), 400, 'unknown_eval_agent');
      expectError(await refused(client.submit({ ...base(), agent: 'bad\u0007agent' })), 400, 'invalid_eval_agent');
      expectError(await refused(client.submit({ ...base(), agent: '' })), 400, 'invalid_eval_agent');
      expectError(await refused(client.submit({ ...base(), options: { case_timeout_ms: -1 } })), 400, 'invalid_eval_options', { reason: 'case_timeout_ms' });
      expectError(await refused(client.submit({ ...base(), metadata: [canary] })), 400, 'invalid_eval_request', { reason: 'metadata' });
      expectError(await refused(client.submit([base()])), 400, 'invalid_eval_request', { reason: 'not_object' });
    });

    test('400 invalid_eval_request for a bad or repeated limit, 400 invalid_eval_cursor for a cursor the store never issued', async () => {
      expectError(await refused(client.list('?limit=abc')), 400, 'invalid_eval_request', { field: 'limit' });
      expectError(await refused(client.list('?limit=1&limit=2')), 400, 'invalid_eval_request', { field: 'limit' });
      expectError(await refused(client.list('?limit=-1')), 400, 'invalid_eval_request', { field: 'limit' });
      expectError(await refused(client.list(`?cursor=${canary}`)), 400, 'invalid_eval_cursor');
      expectError(await refused(client.list('?cursor=a&cursor=b')), 400, 'invalid_eval_request', { field: 'cursor' });
      for (const limit of ['0', '100000']) expect((await refused(client.list(`?limit=${limit}`))).status).toBe(400);
    });

    test('400 for baseline bodies and compare parameters that are not what the route takes', async () => {
      const jobId = await completedReferenceJob();
      expectError(await refused(client.putBaseline('reference-helper', 'b', { job_id: jobId, note: canary })), 400, 'unknown_eval_request_fields', { field: 'note' });
      expectError(await refused(client.putBaseline('reference-helper', 'b', { job_id: 7 })), 400, 'invalid_eval_request', { field: 'job_id' });
      expectError(await refused(client.putBaseline('reference-helper', 'b', '[]')), 400, 'invalid_eval_request');
      expectError(await refused(client.compare(jobId, '')), 400, 'invalid_eval_compare_options', { field: 'baseline' });
      expectError(await refused(client.compare(jobId, 'baseline=main&tolerance=2')), 400, 'invalid_eval_compare_options', { field: 'tolerance' });
      expectError(await refused(client.compare(jobId, 'baseline=main&tolerance=abc')), 400, 'invalid_eval_compare_options', { field: 'tolerance' });
      expectError(await refused(client.compare(jobId, 'baseline=a&baseline=b')), 400, 'invalid_eval_request', { field: 'baseline' });
      expectError(await refused(client.compare(jobId, `baseline=${canary}`)), 404, 'not_found');
    });

    test('413 evaluation_request_limit_exceeded for a body over 2 MiB and for a body 100 deep, without the body', async () => {
      const big = JSON.stringify({ ...referenceEvalRequest(), metadata: { note: `${canary}${'x'.repeat(2 * 1024 * 1024)}` } });
      expectError(await refused(client.submit(big)), 413, 'evaluation_request_limit_exceeded', { limit: 'bytes' });
      const deep = `{"metadata":${'['.repeat(100)}"${canary}"${']'.repeat(100)}}`;
      expectError(await refused(client.submit(deep)), 413, 'evaluation_request_limit_exceeded', { limit: 'depth' });
      const justBelow = JSON.stringify({ ...referenceEvalRequest(), metadata: { note: 'x'.repeat(1024 * 1024) } });
      expect((await client.submit(justBelow)).status).toBe(201);
    });
  });

  describe('readiness', () => {
    test('GET /health/ready has an evaluation component up, running, with its identity source', async () => {
      const ready = await service.http.send('/health/ready').result;
      expect(ready.status).toBe(200);
      expect(ready.body.info.evaluation).toEqual({
        status: 'up',
        state: 'running',
        identity_source: expect.stringMatching(/^(system_identifier|identity_row)$/),
        active_jobs: expect.any(Number),
        queued_jobs: 0,
        recovered_jobs: 0,
      });
      expect((await service.http.send('/health/live').result).status).toBe(200);
    });
  });

  describe('hostile input', () => {
    test('odd ids (unicode, %00, malformed escapes, very long) never answer 5xx on any route', async () => {
      const jobId = await completedReferenceJob();
      const ids = ['%00', 'eval-%00', '%C3%BC%E2%9C%93', '%F0%9F%92%A9', '%ED%A0%80', '%ZZ', '%E0%A4%A', encodeURIComponent(canary), 'a'.repeat(6000), `eval-${'0'.repeat(31)}%00`, '..%2F..%2Fetc'];
      for (const id of ids) {
        // a job id the store cannot have minted is not_found; an escape that does not decode is 400 before routing
        for (const answer of [client.status(id), client.result(id), client.cancel(id), client.compare(id, 'baseline=main')]) {
          const result = await refused(answer);
          expect([[400, 'bad_request'], [404, 'not_found']]).toContainEqual([result.status, result.body?.code]);
        }
        for (const answer of [
          client.compare(jobId, `baseline=${id}`),
          client.putBaseline(id, 'main', { job_id: jobId }),
          client.putBaseline('reference-helper', 'odd', { job_id: decodeSafely(id) }),
          client.getBaseline(id, id),
          client.list(`?cursor=${id}`),
        ]) {
          const result = await refused(answer);
          expect(result.status).toBeGreaterThanOrEqual(400);
          expect(result.status).toBeLessThan(500);
          expect(typeof result.body?.code).toBe('string');
        }
        // baseline names are opaque: one the store takes is stored, any other is refused with a code
        const named = await refused(client.putBaseline('reference-helper', id, { job_id: jobId }));
        if (named.status === 200) expect(named.body.baseline).toMatchObject({ eval_set_id: 'reference-helper', job_id: jobId });
        else expect([named.status, typeof named.body?.code]).toEqual([400, 'string']);
      }
      expect((await client.getBaseline('reference-helper', 'odd')).status).toBe(404);
      expect((await client.getBaseline('reference-helper', '%C3%BC%E2%9C%93')).body.baseline).toMatchObject({ name: 'ü✓', job_id: jobId });
    }, 40_000);

    test('bodies of the wrong shape (arrays, scalars, null, text) answer 400 with a code', async () => {
      const request = (changes: Record<string, unknown>) => JSON.stringify({ ...referenceEvalRequest(), ...changes });
      const bodies: Array<[string, Record<string, string> | undefined, string]> = [
        ['[]', undefined, 'invalid_eval_request'],
        ['[{"set":{}}]', undefined, 'invalid_eval_request'],
        [`"${canary}"`, undefined, 'invalid_json'],
        ['123', undefined, 'invalid_json'],
        ['null', undefined, 'invalid_json'],
        ['', undefined, 'invalid_eval_set'],
        ['{"set": [], "agent": "helper", "metrics": [{"name": "tool_trajectory"}]}', undefined, 'invalid_eval_set'],
        [`{"set": {"id": ["${canary}"], "version": "1", "cases": [{"case_id": "a", "input": "b"}]}, "agent": "helper", "metrics": {}}`, undefined, 'invalid_eval_set'],
        [request({ agent: ['helper'] }), undefined, 'invalid_eval_agent'],
        [request({ metrics: 'tool_trajectory' }), undefined, 'invalid_eval_metrics'],
        [request({ options: [1] }), undefined, 'invalid_eval_options'],
        [`{"set": "${canary}"`, undefined, 'invalid_json'],
        [request({ metadata: { note: canary } }), { 'content-encoding': 'gzip' }, 'invalid_compressed_body'],
        [request({ metadata: { [`\u0000${canary}`]: 1 } }), undefined, 'invalid_eval_request'],
        [`{"metadata": {"note": "\\ud800${canary}"}}`, undefined, 'invalid_eval_request'],
      ];
      for (const [body, headers, code] of bodies) {
        const result = await refused(client.submit(body, headers));
        expect({ body: body.slice(0, 60), status: result.status, code: result.body?.code }).toEqual({ body: body.slice(0, 60), status: 400, code });
      }
      // a body of another content type is not read at all: 415 before the scope is resolved
      expect((await refused(client.submit(request({ metadata: { note: canary } }), { 'content-type': 'text/plain' }))).body).toEqual({ status_code: 415, error: 'Unsupported Media Type', code: 'unsupported_media_type' });
      for (const body of ['[]', '"x"', `{"job_id": ["${canary}"]}`, '{"job_id": {"a": 1}}', '{"job_id": null}']) {
        expect((await refused(client.putBaseline('reference-helper', 'shape', body))).status).toBe(400);
      }
      for (const query of [`?cursor=${'c'.repeat(4000)}`, '?cursor=%00', '?limit=1e3', '?limit=%201']) {
        expect((await refused(client.list(query))).status).toBe(400);
      }
      // bracketed names are other parameters to Express 5's simple query parser: ignored
      for (const query of ['?limit[]=1', '?limit[a]=1']) expect((await client.list(query)).status).toBe(200);
    });

    test('a canary in inputs and secret metadata reaches no job record, error body or log line', async () => {
      const request = referenceEvalRequest();
      request.set = { id: `canary-set-${randomBytes(4).toString('hex')}`, version: '1', cases: [{ case_id: 'c', input: `${canary} where?`, expected_output: canary }] };
      request.metrics = [{ name: 'response_match' }];
      request.metadata = { api_token: canary, owner: { password: canary, team: 'evals' }, Authorization: canary };
      const submitted = await client.submit(request);
      expect(submitted.status).toBe(201);
      expect(submitted.body.job.metadata).toEqual({ api_token: '[redacted]', owner: { password: '[redacted]', team: 'evals' }, Authorization: '[redacted]' });
      const done = await client.waitForPhase(submitted.body.job.job_id);
      expect(done.phase).toBe('completed');
      const records = [submitted, await client.status(done.job_id), await client.list('?limit=1000')];
      for (const record of records) expect(record.text).not.toContain(canary);
      // mistakes of its own, so that the test stands alone; the other tests' answers are checked too
      const conflicting = referenceEvalRequest();
      conflicting.set.id = request.set.id;
      for (const mistake of [
        client.submit(conflicting),
        client.submit({ ...request, agent: `${canary}-agent` }),
        client.submit({ ...request, metrics: [{ name: 'response_match', match: canary }] }),
        client.submit({ ...request, options: { case_timeout_ms: canary } }),
        client.submit(`{"set": ${JSON.stringify(request.set)}, "agent": "${canary}`),
        client.submit(JSON.stringify({ ...request, metadata: { note: canary.repeat(200_000) } })),
        client.status(canary),
        client.compare(done.job_id, `baseline=${canary}`),
        client.putBaseline(request.set.id, 'main', { job_id: canary }),
        client.list(`?cursor=${canary}`),
      ]) {
        const answer = await refused(mistake);
        expect(answer.status).toBeGreaterThanOrEqual(400);
      }
      expect(mistakes.length).toBeGreaterThanOrEqual(10);
      for (const mistake of mistakes) {
        expect(mistake.status).toBeLessThan(500);
        expect(mistake.text).not.toContain(canary);
      }
      expect(logger.entries.length).toBeGreaterThan(0);
      const logged = logger.entries.map((entry) => entry.text).join('\n');
      expect(logged).not.toContain(canary);
      expect(logged).not.toMatch(/\b5\d\d (internal_error|eval_)/);
    });
  });

  describe('paging', () => {
    test('GET /evaluations with limit=1 walks every job exactly once through next_cursor and has_more', async () => {
      await completedReferenceJob();
      const walked: string[] = [];
      let cursor: string | null = null;
      for (let page = 0; page < 1000; page += 1) {
        const answer: HttpResult = await client.list(`?limit=1${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
        expect(answer.status).toBe(200);
        expect(answer.body.jobs).toHaveLength(1);
        walked.push(answer.body.jobs[0].job_id);
        if (!answer.body.has_more) {
          expect(answer.body.next_cursor).toBeNull();
          break;
        }
        expect(typeof answer.body.next_cursor).toBe('string');
        cursor = answer.body.next_cursor;
      }
      expect(new Set(walked).size).toBe(walked.length);
      expect([...walked].sort()).toEqual([...client.created].sort());
      expect(walked.length).toBeGreaterThan(10);
      const whole = await client.list();
      expect(whole.body).toMatchObject({ has_more: false, next_cursor: null });
      expect(whole.body.jobs.map((job: { job_id: string }) => job.job_id)).toEqual(walked);
    });
  });
});

async function allJobIds(client: EvaluationClient): Promise<string[]> {
  const answer = await client.list('?limit=1000');
  expect(answer.body.has_more).toBe(false);
  return answer.body.jobs.map((job: { job_id: string }) => job.job_id);
}

function decodeSafely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
