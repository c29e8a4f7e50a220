import type { EvalJobRecord, EvalScope } from '../../src/evaluation/eval.types';
import type { PostgresEvalStore } from '../../src/evaluation/store/postgres-eval-store';
import { canonicalJson } from '../../src/json';
import { startTcpProxy } from '../support/tcp-proxy';
import { canonicalBytes, evalError, evalResult, preparedRequest, recountUsage, SettableClock, tableCounts, usageRows, useEvalHarness } from '../support/eval-fixtures';

const A: EvalScope = Object.freeze({ app: 'app-a' });
const B: EvalScope = Object.freeze({ app: 'app-b' });
const JOBS = 'agent_runtime_eval_jobs';

/** The JSON-safe fields of a job record as the table holds them. */
async function rawJob(h: ReturnType<ReturnType<typeof useEvalHarness>>, jobId: string) {
  const [row] = await h.sql(`SELECT * FROM ${JOBS} WHERE job_id = $1`, [jobId]);
  return row;
}

describe('§4.3 createEvaluation', () => {
  const h = useEvalHarness('each');
  let clock: SettableClock;
  let store: PostgresEvalStore;

  beforeEach(async () => {
    clock = new SettableClock(1_700_000_000_000);
    store = await h().store({}, { clock });
  });

  it('stores the set revision and a queued job at revision 0, and returns the frozen record with numbers for bigint columns', async () => {
    const request = preparedRequest({ metadata: { build: '1.2.3' } });
    const job = await store.createEvaluation(A, request);
    expect(job).toEqual({
      job_id: expect.stringMatching(/^eval-[0-9a-f]{32}$/),
      scope_app: 'app-a',
      eval_set_id: 'set-a',
      eval_set_version: 'v1',
      agent: 'helper',
      metrics: request.metrics,
      options: {},
      metadata: { build: '1.2.3' },
      request_bytes: request.request_bytes,
      record_bytes: request.request_bytes,
      phase: 'queued',
      revision: 0,
      created_at_ms: 1_700_000_000_000,
      updated_at_ms: 1_700_000_000_000,
      reason: null,
      started_at_ms: null,
      finished_at_ms: null,
    });
    expect(Object.isFrozen(job)).toBe(true);
    expect(Object.isFrozen(job.metrics[0])).toBe(true);
    const [set] = await h().sql(`SELECT * FROM agent_runtime_eval_set_revisions`);
    expect(set).toEqual({
      scope_app: 'app-a',
      eval_set_id: 'set-a',
      eval_set_version: 'v1',
      digest: request.set_digest,
      content: request.set,
      content_bytes: request.set_bytes,
      created_at_ms: '1700000000000',
    });
    expect(await usageRows(h())).toEqual({
      '': { sets: 1, jobs: 1, baselines: 0, bytes: request.set_bytes + request.request_bytes },
      'app-a': { sets: 1, jobs: 1, baselines: 0, bytes: request.set_bytes + request.request_bytes },
    });
  });

  it('reuses a stored set revision with the same digest: one revision, bytes counted once', async () => {
    const request = preparedRequest();
    const first = await store.createEvaluation(A, request);
    const second = await store.createEvaluation(A, preparedRequest({ agent: 'other' }));
    expect(second.job_id).not.toBe(first.job_id);
    expect((await tableCounts(h())).set_revisions).toBe(1);
    const other = preparedRequest({ agent: 'other' });
    expect((await usageRows(h()))['app-a']).toEqual({ sets: 1, jobs: 2, baselines: 0, bytes: request.set_bytes + request.request_bytes + other.request_bytes });
  });

  it('a set key of another app is another revision', async () => {
    await store.createEvaluation(A, preparedRequest());
    await store.createEvaluation(B, preparedRequest({ set: { cases: [{ case_id: 'other', input: 'x' }] } }));
    expect((await tableCounts(h())).set_revisions).toBe(2);
  });

  it('the same key with another digest is eval_set_revision_conflict, and nothing is written', async () => {
    await store.createEvaluation(A, preparedRequest());
    const before = { counts: await tableCounts(h()), usage: await usageRows(h()) };
    const changed = preparedRequest({ set: { cases: [{ case_id: 'c1', input: 'changed' }] } });
    await evalError(store.createEvaluation(A, changed), 'eval_set_revision_conflict');
    expect({ counts: await tableCounts(h()), usage: await usageRows(h()) }).toEqual(before);
  });

  it('maxSets counts set revisions of the whole store: eval_set_capacity_reached, a known revision still serves', async () => {
    const capped = await h().store({ maxSets: 2 });
    await capped.createEvaluation(A, preparedRequest({ set: { version: 'v1' } }));
    await capped.createEvaluation(B, preparedRequest({ set: { version: 'v2' } }));
    await evalError(capped.createEvaluation(A, preparedRequest({ set: { version: 'v3' } })), 'eval_set_capacity_reached', { limit: 2 });
    await capped.createEvaluation(A, preparedRequest({ set: { version: 'v1' } }));
    expect(await tableCounts(h())).toMatchObject({ set_revisions: 2, jobs: 3 });
  });

  it('maxJobs is eval_job_capacity_reached, and the new set revision of the refused job is rolled back (no orphan)', async () => {
    const capped = await h().store({ maxJobs: 1 });
    await capped.createEvaluation(A, preparedRequest({ set: { version: 'v1' } }));
    const before = await usageRows(h());
    await evalError(capped.createEvaluation(B, preparedRequest({ set: { version: 'v2' } })), 'eval_job_capacity_reached', { limit: 1 });
    expect(await tableCounts(h())).toMatchObject({ set_revisions: 1, jobs: 1 });
    // the app row of B was created in the refused transaction only
    expect(await usageRows(h())).toEqual(before);
  });

  it('a set revision or request above maxRecordBytes is eval_record_too_large', async () => {
    const request = preparedRequest();
    const exact = await h().store({ maxRecordBytes: request.request_bytes });
    await exact.createEvaluation(A, request);
    const small = await h().store({ maxRecordBytes: request.request_bytes - 1 });
    await evalError(small.createEvaluation(A, request), 'eval_record_too_large', { limit: request.request_bytes - 1 });
    const tiny = await h().store({ maxRecordBytes: request.set_bytes - 1 });
    await evalError(tiny.createEvaluation(B, request), 'eval_record_too_large');
    expect((await tableCounts(h())).jobs).toBe(1);
  });

  it('maxScopeBytes bounds each app on its own: eval_scope_bytes_exceeded for the full app, another app still writes', async () => {
    const request = preparedRequest();
    const perApp = request.set_bytes + request.request_bytes;
    const capped = await h().store({ maxScopeBytes: perApp + request.request_bytes });
    await capped.createEvaluation(A, request);
    await capped.createEvaluation(A, request);
    await evalError(capped.createEvaluation(A, request), 'eval_scope_bytes_exceeded', { limit: perApp + request.request_bytes });
    await capped.createEvaluation(B, request);
    expect((await usageRows(h()))['app-a'].bytes).toBe(perApp + request.request_bytes);
  });

  it('maxTotalBytes bounds the whole store: eval_store_bytes_exceeded', async () => {
    const request = preparedRequest();
    const perApp = request.set_bytes + request.request_bytes;
    const capped = await h().store({ maxTotalBytes: 2 * perApp });
    await capped.createEvaluation(A, request);
    await capped.createEvaluation(B, request);
    await evalError(capped.createEvaluation({ app: 'app-c' }, request), 'eval_store_bytes_exceeded', { limit: 2 * perApp });
    expect((await usageRows(h()))['']).toEqual({ sets: 2, jobs: 2, baselines: 0, bytes: 2 * perApp });
  });

  it('refuses a bad scope and a request Postgres cannot hold, before any transaction', async () => {
    for (const scope of [{ app: '' }, { app: 'a\u0000b' }, { app: 'x'.repeat(257) }, null, { app: 'a', extra: 1 }]) {
      await evalError(store.createEvaluation(scope as never, preparedRequest()), 'invalid_eval_scope');
    }
    await evalError(store.createEvaluation(A, preparedRequest({ metadata: { note: 'a\u0000' } })), 'invalid_eval_store_arguments', { field: 'request' });
    await evalError(store.createEvaluation(A, { ...preparedRequest(), set_digest: 'nope' }), 'invalid_eval_store_arguments', { field: 'request' });
    await evalError(store.createEvaluation(A, null as never), 'invalid_eval_store_arguments', { field: 'request' });
    expect(await tableCounts(h())).toMatchObject({ set_revisions: 0, jobs: 0, usage: 1 });
  });
});

describe('§5 transition (compare-and-set)', () => {
  const h = useEvalHarness('each');
  let clock: SettableClock;
  let store: PostgresEvalStore;
  let job: EvalJobRecord;

  beforeEach(async () => {
    clock = new SettableClock(1000);
    store = await h().store({}, { clock });
    job = await store.createEvaluation(A, preparedRequest());
  });

  it('queued → running → completed: revisions 1 and 2, started and finished times, the result stored and counted', async () => {
    clock.now = 2000;
    const running = await store.transition(A, job.job_id, ['queued'], 'running');
    expect(running).toMatchObject({ phase: 'running', revision: 1, started_at_ms: 2000, updated_at_ms: 2000, finished_at_ms: null, reason: null });
    clock.now = 3000;
    const result = evalResult(true, 10);
    const completed = await store.transition(A, job.job_id, ['running'], 'completed', { result });
    const resultBytes = canonicalBytes(result);
    expect(completed).toMatchObject({ phase: 'completed', revision: 2, started_at_ms: 2000, finished_at_ms: 3000, updated_at_ms: 3000, record_bytes: job.request_bytes + resultBytes });
    expect(await store.getResult(A, job.job_id)).toEqual({ job: completed, result });
    const request = preparedRequest();
    expect((await usageRows(h()))['app-a'].bytes).toBe(request.set_bytes + request.request_bytes + resultBytes);
  });

  it('failed or cancelled from the queue is revision 1 with its reason and finished time', async () => {
    clock.now = 5000;
    expect(await store.transition(A, job.job_id, ['queued', 'running'], 'failed', { reason: 'admission_failed' })).toMatchObject({
      phase: 'failed',
      revision: 1,
      reason: 'admission_failed',
      started_at_ms: null,
      finished_at_ms: 5000,
    });
    const other = await store.createEvaluation(A, preparedRequest());
    expect(await store.transition(A, other.job_id, ['queued'], 'cancelled', { reason: 'user_cancelled' })).toMatchObject({ phase: 'cancelled', revision: 1, reason: 'user_cancelled' });
    expect(await store.getResult(A, other.job_id)).toMatchObject({ result: null });
  });

  it('an absent job, another app\'s job or an id the store cannot have minted is not_found', async () => {
    await evalError(store.transition(A, 'eval-' + '0'.repeat(32), ['queued'], 'running'), 'not_found');
    await evalError(store.transition(B, job.job_id, ['queued'], 'running'), 'not_found');
    await evalError(store.transition(A, 'not-an-id', ['queued'], 'running'), 'not_found');
    expect(await rawJob(h(), job.job_id)).toMatchObject({ phase: 'queued', revision: '0' });
  });

  it('a phase that is not expected is stale_phase {expected, actual}, and nothing changes', async () => {
    await store.transition(A, job.job_id, ['queued'], 'running');
    const before = await rawJob(h(), job.job_id);
    await evalError(store.transition(A, job.job_id, ['queued'], 'cancelled', { reason: 'user_cancelled' }), 'stale_phase', { expected: ['queued'], actual: 'running' });
    expect(await rawJob(h(), job.job_id)).toEqual(before);
  });

  it('an expected phase from which the move is illegal is invalid_eval_job_transition {from, to}; terminal phases are absorbing', async () => {
    await evalError(store.transition(A, job.job_id, ['queued'], 'completed', { result: evalResult() }), 'invalid_eval_job_transition', { from: 'queued', to: 'completed' });
    await evalError(store.transition(A, job.job_id, ['queued'], 'timed_out', { reason: 'deadline_exceeded' }), 'invalid_eval_job_transition', { from: 'queued', to: 'timed_out' });
    await evalError(store.transition(A, job.job_id, ['queued'], 'queued'), 'invalid_eval_job_transition', { from: 'queued', to: 'queued' });
    await store.transition(A, job.job_id, ['queued'], 'cancelled', { reason: 'user_cancelled' });
    for (const to of ['running', 'failed', 'cancelled', 'queued'] as const) {
      const fields = to === 'failed' || to === 'cancelled' ? { reason: 'x' } : undefined;
      await evalError(store.transition(A, job.job_id, ['cancelled'], to, fields), 'invalid_eval_job_transition', { from: 'cancelled', to });
    }
    expect(await rawJob(h(), job.job_id)).toMatchObject({ phase: 'cancelled', revision: '1' });
  });

  it('two stores on their own pools racing the same move: exactly one commits, the other is stale_phase', async () => {
    const other = await h().store();
    const outcomes = await Promise.all(
      [store, other, store, other].map((s) =>
        s.transition(A, job.job_id, ['queued'], 'running').then(
          () => 'ok',
          (error: { code: string }) => error.code,
        ),
      ),
    );
    expect(outcomes.sort()).toEqual(['ok', 'stale_phase', 'stale_phase', 'stale_phase']);
    expect(await rawJob(h(), job.job_id)).toMatchObject({ phase: 'running', revision: '1' });
  });

  it('a fractional wall clock is stored as whole milliseconds', async () => {
    clock.now = 4000.75;
    expect(await store.transition(A, job.job_id, ['queued'], 'running')).toMatchObject({ started_at_ms: 4000, updated_at_ms: 4000 });
  });

  it('checks its arguments: phases, a reason (≤ 4096 bytes) exactly for failure phases, a result exactly for completed', async () => {
    const id = job.job_id;
    const refusals: Array<[Promise<unknown>, string]> = [
      [store.transition(A, id, [], 'running'), 'expected'],
      [store.transition(A, id, ['waiting' as never], 'running'), 'expected'],
      [store.transition(A, id, ['queued'], 'done' as never), 'to'],
      [store.transition(A, id, ['queued'], 'failed'), 'reason'],
      [store.transition(A, id, ['queued'], 'running', { reason: 'why' }), 'reason'],
      [store.transition(A, id, ['queued'], 'failed', { reason: 'é'.repeat(2049) }), 'reason'],
      [store.transition(A, id, ['queued'], 'failed', { reason: 'a\u0000' }), 'reason'],
      [store.transition(A, id, ['running'], 'completed'), 'result'],
      [store.transition(A, id, ['queued'], 'failed', { reason: 'x', result: evalResult() }), 'result'],
      [store.transition(A, id, ['running'], 'completed', { result: { ...evalResult(), note: 'a\u0000' } as never }), 'result'],
      [store.transition(A, id, ['queued'], 'running', { extra: 1 } as never), 'fields'],
    ];
    for (const [promise, field] of refusals) await evalError(promise, 'invalid_eval_store_arguments', { field });
    await store.transition(A, id, ['queued'], 'failed', { reason: 'é'.repeat(2048) });
  });

  it('a result beyond the caps leaves the job running and usage unchanged: eval_record_too_large, eval_scope_bytes_exceeded, eval_store_bytes_exceeded', async () => {
    const request = preparedRequest();
    const stored = request.set_bytes + request.request_bytes;
    const result = evalResult(true, 100);
    const resultBytes = canonicalBytes(result);
    const cases = [
      [{ maxRecordBytes: job.request_bytes + resultBytes - 1 }, 'eval_record_too_large', job.request_bytes + resultBytes - 1],
      [{ maxRecordBytes: resultBytes - 1 }, 'eval_record_too_large', resultBytes - 1],
      [{ maxScopeBytes: stored + resultBytes - 1 }, 'eval_scope_bytes_exceeded', stored + resultBytes - 1],
      [{ maxTotalBytes: stored + resultBytes - 1 }, 'eval_store_bytes_exceeded', stored + resultBytes - 1],
    ] as const;
    await store.transition(A, job.job_id, ['queued'], 'running');
    const before = { row: await rawJob(h(), job.job_id), usage: await usageRows(h()) };
    for (const [options, code, limit] of cases) {
      const capped = await h().store(options);
      await evalError(capped.transition(A, job.job_id, ['running'], 'completed', { result }), code, code === 'eval_record_too_large' && limit === resultBytes - 1 ? undefined : { limit });
      expect({ row: await rawJob(h(), job.job_id), usage: await usageRows(h()) }).toEqual(before);
    }
    const exact = await h().store({ maxRecordBytes: job.request_bytes + resultBytes, maxScopeBytes: stored + resultBytes, maxTotalBytes: stored + resultBytes });
    await exact.transition(A, job.job_id, ['running'], 'completed', { result });
  });
});

describe('§3 recover', () => {
  const h = useEvalHarness('each');

  it('one statement fails every queued and running job with evaluation_service_restarted, revision + 1, finished now; terminal rows stay', async () => {
    const clock = new SettableClock(1000);
    const store = await h().store({}, { clock });
    const queued = await store.createEvaluation(A, preparedRequest());
    const running = await store.createEvaluation(B, preparedRequest());
    await store.transition(B, running.job_id, ['queued'], 'running');
    const done = await store.createEvaluation(A, preparedRequest());
    await store.transition(A, done.job_id, ['queued'], 'cancelled', { reason: 'user_cancelled' });
    clock.now = 9000;
    expect(await store.recover()).toBe(2);
    expect(await store.getJob(A, queued.job_id)).toMatchObject({ phase: 'failed', reason: 'evaluation_service_restarted', revision: 1, finished_at_ms: 9000, updated_at_ms: 9000 });
    expect(await store.getJob(B, running.job_id)).toMatchObject({ phase: 'failed', reason: 'evaluation_service_restarted', revision: 2, started_at_ms: 1000, finished_at_ms: 9000 });
    expect(await store.getJob(A, done.job_id)).toMatchObject({ phase: 'cancelled', reason: 'user_cancelled', revision: 1, finished_at_ms: 1000 });
    expect(await store.recover()).toBe(0);
  });
});

describe('§6 reads and listings', () => {
  const h = useEvalHarness('each');

  it('getJob and getResult are scope-isolated and frozen', async () => {
    const store = await h().store();
    const job = await store.createEvaluation(A, preparedRequest());
    expect(await store.getJob(A, job.job_id)).toEqual(job);
    expect(Object.isFrozen(await store.getJob(A, job.job_id))).toBe(true);
    await evalError(store.getJob(B, job.job_id), 'not_found');
    await evalError(store.getResult(B, job.job_id), 'not_found');
    await evalError(store.getJob(A, 'EVAL-' + 'a'.repeat(32)), 'not_found');
    expect(await store.getResult(A, job.job_id)).toEqual({ job, result: null });
  });

  it('listJobs pages by (created_at_ms, job_id) with an opaque cursor, only over the app\'s jobs', async () => {
    const clock = new SettableClock(100);
    const store = await h().store({ defaultPageLimit: 2 }, { clock });
    const created: EvalJobRecord[] = [];
    for (const now of [300, 100, 200, 200, 100]) {
      clock.now = now;
      created.push(await store.createEvaluation(A, preparedRequest()));
    }
    await store.createEvaluation(B, preparedRequest());
    const order = [...created].sort((x, y) => x.created_at_ms - y.created_at_ms || (x.job_id < y.job_id ? -1 : 1)).map((job) => job.job_id);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await store.listJobs(A, cursor === undefined ? undefined : { cursor });
      expect(page.items.length).toBeLessThanOrEqual(2);
      expect(Object.isFrozen(page.items)).toBe(true);
      seen.push(...page.items.map((job) => job.job_id));
      expect(page.has_more).toBe(page.next_cursor !== null);
      cursor = page.next_cursor ?? undefined;
      pages += 1;
    } while (cursor !== undefined);
    expect(seen).toEqual(order);
    expect(pages).toBe(3);
    expect((await store.listJobs(A, { limit: 10 })).items.map((job) => job.job_id)).toEqual(order);
    expect(await store.listJobs({ app: 'nobody' })).toEqual({ items: [], next_cursor: null, has_more: false });
  });

  it('a malformed cursor is invalid_eval_cursor; a limit outside 1..maxPageLimit is invalid_eval_store_arguments', async () => {
    const store = await h().store({ maxPageLimit: 5 });
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    for (const cursor of ['%%%', b64([1, 'not-a-job-id']), b64(['1', 'eval-' + 'a'.repeat(32)]), b64([1.5, 'eval-' + 'a'.repeat(32)]), b64({})]) {
      await evalError(store.listJobs(A, { cursor }), 'invalid_eval_cursor');
    }
    for (const cursor of ['%%%', b64(['a']), b64(['a', 'b\u0000']), b64([1, 2])]) await evalError(store.listSets(A, { cursor }), 'invalid_eval_cursor');
    for (const limit of [0, 6, 1.5, '2']) {
      await evalError(store.listJobs(A, { limit } as never), 'invalid_eval_store_arguments', { field: 'limit' });
      await evalError(store.listSets(A, { limit } as never), 'invalid_eval_store_arguments', { field: 'limit' });
    }
    await evalError(store.listJobs(A, { limit: 1, page: 2 } as never), 'invalid_eval_store_arguments', { field: 'options' });
    expect((await store.listJobs(A, { limit: 5 })).items).toEqual([]);
  });

  it('getSet returns the revision with its content; listSets pages bytewise by (id, version) without content', async () => {
    const store = await h().store();
    const ids = ['b', 'B', 'a,b', 'a', 'é', 'z'];
    for (const id of ids) await store.createEvaluation(A, preparedRequest({ set: { id, version: 'v1' } }));
    await store.createEvaluation(A, preparedRequest({ set: { id: 'a', version: 'v0' } }));
    await store.createEvaluation(B, preparedRequest({ set: { id: 'other' } }));
    const request = preparedRequest({ set: { id: 'a', version: 'v1' } });
    expect(await store.getSet(A, 'a', 'v1')).toEqual({
      eval_set_id: 'a',
      eval_set_version: 'v1',
      digest: request.set_digest,
      content: request.set,
      content_bytes: request.set_bytes,
      created_at_ms: expect.any(Number),
    });
    await evalError(store.getSet(B, 'a', 'v1'), 'not_found');
    await evalError(store.getSet(A, 'a', 'v9'), 'not_found');
    await evalError(store.getSet(A, 'a\u0000', 'v1'), 'not_found');
    const keys: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.listSets(A, { limit: 3, ...(cursor ? { cursor } : {}) });
      for (const item of page.items) {
        expect(item).not.toHaveProperty('content');
        keys.push(`${item.eval_set_id}/${item.eval_set_version}`);
      }
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    // COLLATE "C": bytewise, upper case before lower case, UTF-8 multibyte last
    expect(keys).toEqual(['B/v1', 'a/v0', 'a/v1', 'a,b/v1', 'b/v1', 'z/v1', 'é/v1']);
  });
});

describe('§6 baselines', () => {
  const h = useEvalHarness('each');
  let clock: SettableClock;
  let store: PostgresEvalStore;
  let completed: EvalJobRecord;

  const complete = async (scope = A, set = {}) => {
    const job = await store.createEvaluation(scope, preparedRequest({ set }));
    await store.transition(scope, job.job_id, ['queued'], 'running');
    return store.transition(scope, job.job_id, ['running'], 'completed', { result: evalResult() });
  };

  beforeEach(async () => {
    clock = new SettableClock(1000);
    store = await h().store({ maxBaselines: 2 }, { clock });
    completed = await complete();
  });

  it('putBaseline upserts: a new record, then the same name pointed at another job keeps created_at_ms', async () => {
    const baseline = await store.putBaseline(A, { evalSetId: 'set-a', name: 'main', jobId: completed.job_id });
    expect(baseline).toEqual({ eval_set_id: 'set-a', name: 'main', job_id: completed.job_id, created_at_ms: 1000, updated_at_ms: 1000 });
    expect(Object.isFrozen(baseline)).toBe(true);
    clock.now = 2000;
    const next = await complete();
    expect(await store.putBaseline(A, { evalSetId: 'set-a', name: 'main', jobId: next.job_id })).toEqual({
      eval_set_id: 'set-a',
      name: 'main',
      job_id: next.job_id,
      created_at_ms: 1000,
      updated_at_ms: 2000,
    });
    expect(await store.getBaseline(A, 'set-a', 'main')).toEqual({ eval_set_id: 'set-a', name: 'main', job_id: next.job_id, created_at_ms: 1000, updated_at_ms: 2000, result: evalResult() });
    expect((await usageRows(h()))['app-a'].baselines).toBe(1);
  });

  it('the job must be completed (eval_job_not_completed), of that set and app (not_found)', async () => {
    const queued = await store.createEvaluation(A, preparedRequest());
    await evalError(store.putBaseline(A, { evalSetId: 'set-a', name: 'main', jobId: queued.job_id }), 'eval_job_not_completed');
    await store.transition(A, queued.job_id, ['queued'], 'failed', { reason: 'admission_failed' });
    await evalError(store.putBaseline(A, { evalSetId: 'set-a', name: 'main', jobId: queued.job_id }), 'eval_job_not_completed');
    await evalError(store.putBaseline(A, { evalSetId: 'set-b', name: 'main', jobId: completed.job_id }), 'not_found');
    await evalError(store.putBaseline(B, { evalSetId: 'set-a', name: 'main', jobId: completed.job_id }), 'not_found');
    await evalError(store.putBaseline(A, { evalSetId: 'set-a', name: 'main', jobId: 'eval-' + 'f'.repeat(32) }), 'not_found');
    await evalError(store.putBaseline(A, { evalSetId: 'set-a', name: '', jobId: completed.job_id }), 'invalid_eval_store_arguments', { field: 'name' });
    await evalError(store.putBaseline(A, { evalSetId: 'x\u0000', name: 'main', jobId: completed.job_id }), 'invalid_eval_store_arguments', { field: 'evalSetId' });
    await evalError(store.putBaseline(A, { evalSetId: 'set-a', name: 'main', jobId: completed.job_id, extra: 1 } as never), 'invalid_eval_store_arguments', { field: 'baseline' });
    expect(await tableCounts(h())).toMatchObject({ baselines: 0 });
  });

  it('maxBaselines counts baselines of the whole store: eval_baseline_capacity_reached for a new one, an update still works', async () => {
    const other = await complete(B);
    await store.putBaseline(A, { evalSetId: 'set-a', name: 'one', jobId: completed.job_id });
    await store.putBaseline(B, { evalSetId: 'set-a', name: 'one', jobId: other.job_id });
    await evalError(store.putBaseline(A, { evalSetId: 'set-a', name: 'two', jobId: completed.job_id }), 'eval_baseline_capacity_reached', { limit: 2 });
    await store.putBaseline(A, { evalSetId: 'set-a', name: 'one', jobId: completed.job_id });
    expect((await usageRows(h()))['']).toMatchObject({ baselines: 2 });
  });

  it('getBaseline of an absent name, set or app is not_found', async () => {
    await store.putBaseline(A, { evalSetId: 'set-a', name: 'main', jobId: completed.job_id });
    await evalError(store.getBaseline(A, 'set-a', 'other'), 'not_found');
    await evalError(store.getBaseline(A, 'set-b', 'main'), 'not_found');
    await evalError(store.getBaseline(B, 'set-a', 'main'), 'not_found');
    await evalError(store.getBaseline(A, 'set-a', 'x'.repeat(300)), 'not_found');
  });
});

describe('§6 prune', () => {
  const h = useEvalHarness('each');
  let clock: SettableClock;
  let store: PostgresEvalStore;

  /** A job of `scope` on set `version`, driven to `phase` at time `at`. */
  const jobAt = async (at: number, phase: 'queued' | 'running' | 'completed' | 'failed', version = 'v1', scope = A) => {
    clock.now = at;
    const job = await store.createEvaluation(scope, preparedRequest({ set: { version } }));
    if (phase === 'queued') return job;
    if (phase === 'failed') return store.transition(scope, job.job_id, ['queued'], 'failed', { reason: 'admission_failed' });
    const running = await store.transition(scope, job.job_id, ['queued'], 'running');
    return phase === 'running' ? running : store.transition(scope, job.job_id, ['running'], 'completed', { result: evalResult() });
  };

  beforeEach(async () => {
    clock = new SettableClock(0);
    store = await h().store({}, { clock });
  });

  it('deletes old terminal jobs and unreferenced old set revisions, never queued or running jobs, and keeps usage exact', async () => {
    const oldDone = await jobAt(100, 'completed', 'v-old');
    const oldFailed = await jobAt(110, 'failed', 'v-old');
    const oldQueued = await jobAt(120, 'queued', 'v-busy');
    const oldRunning = await jobAt(130, 'running', 'v-busy');
    const recent = await jobAt(1000, 'completed', 'v-old', B);
    const report = await store.prune({ before: 500 });
    expect(report).toEqual({
      baselines_deleted: 0,
      jobs_deleted: 2,
      set_revisions_deleted: 1,
      bytes_reclaimed: oldDone.record_bytes + oldFailed.record_bytes + preparedRequest({ set: { version: 'v-old' } }).set_bytes,
      scanned: 4,
      next_cursor: null,
      has_more: false,
    });
    for (const gone of [oldDone, oldFailed]) await evalError(store.getJob(A, gone.job_id), 'not_found');
    for (const kept of [oldQueued, oldRunning]) expect((await store.getJob(A, kept.job_id)).job_id).toBe(kept.job_id);
    expect((await store.getJob(B, recent.job_id)).phase).toBe('completed');
    await evalError(store.getSet(A, 'set-a', 'v-old'), 'not_found');
    expect((await store.getSet(A, 'set-a', 'v-busy')).eval_set_version).toBe('v-busy');
    expect(await usageRows(h())).toEqual(await recountUsage(h()));
  });

  it('keeps baselined jobs unless includeBaselines, which deletes the baseline first', async () => {
    const kept = await jobAt(100, 'completed');
    clock.now = 150;
    await store.putBaseline(A, { evalSetId: 'set-a', name: 'main', jobId: kept.job_id });
    expect(await store.prune({ before: 500 })).toMatchObject({ jobs_deleted: 0, baselines_deleted: 0, set_revisions_deleted: 0, scanned: 2 });
    expect((await store.getBaseline(A, 'set-a', 'main')).job_id).toBe(kept.job_id);
    expect(await store.prune({ before: 500, includeBaselines: true })).toMatchObject({ baselines_deleted: 1, jobs_deleted: 1, set_revisions_deleted: 1 });
    expect(await tableCounts(h())).toMatchObject({ baselines: 0, jobs: 0, set_revisions: 0 });
    expect(await usageRows(h())).toEqual(await recountUsage(h()));
  });

  it('a recent baseline of an old job goes with the job under includeBaselines', async () => {
    const old = await jobAt(100, 'completed');
    clock.now = 900;
    await store.putBaseline(A, { evalSetId: 'set-a', name: 'main', jobId: old.job_id });
    expect(await store.prune({ before: 500, includeBaselines: true })).toMatchObject({ baselines_deleted: 1, jobs_deleted: 1, scanned: 2 });
    await evalError(store.getBaseline(A, 'set-a', 'main'), 'not_found');
  });

  it('scans at most limit rows in the fixed order and resumes from the cursor to the same end state', async () => {
    for (let i = 0; i < 5; i += 1) await jobAt(100 + i, 'completed', `v${i}`, i % 2 === 0 ? A : B);
    const kept = await jobAt(50, 'completed', 'v-base');
    clock.now = 60;
    await store.putBaseline(A, { evalSetId: 'set-a', name: 'main', jobId: kept.job_id });
    const reports = [];
    let cursor: string | undefined;
    do {
      const report = await store.prune({ before: 500, limit: 2, ...(cursor ? { cursor } : {}) });
      expect(report.scanned).toBeLessThanOrEqual(2);
      expect(report.has_more).toBe(report.next_cursor !== null);
      reports.push(report);
      cursor = report.next_cursor ?? undefined;
    } while (cursor && reports.length < 20);
    const total = reports.reduce((sum, r) => ({ jobs: sum.jobs + r.jobs_deleted, sets: sum.sets + r.set_revisions_deleted, scanned: sum.scanned + r.scanned }), { jobs: 0, sets: 0, scanned: 0 });
    // 6 terminal jobs scanned (the baselined one kept), then 6 set revisions (the baselined job's kept)
    expect(total).toEqual({ jobs: 5, sets: 5, scanned: 12 });
    expect(reports[0]).toMatchObject({ scanned: 2, has_more: true });
    expect(await tableCounts(h())).toMatchObject({ jobs: 1, set_revisions: 1, baselines: 1 });
    expect(await usageRows(h())).toEqual(await recountUsage(h()));
  });

  it('bad options are invalid_prune_options; a malformed cursor is invalid_eval_cursor', async () => {
    const capped = await h().store({ maxPruneLimit: 10 });
    await evalError(capped.prune({} as never), 'invalid_prune_options', { field: 'before' });
    await evalError(capped.prune({ before: -1 }), 'invalid_prune_options', { field: 'before' });
    await evalError(capped.prune({ before: 1, limit: 11 }), 'invalid_prune_options', { field: 'limit' });
    await evalError(capped.prune({ before: 1, limit: 0 }), 'invalid_prune_options', { field: 'limit' });
    await evalError(capped.prune({ before: 1, includeBaselines: 'yes' } as never), 'invalid_prune_options', { field: 'includeBaselines' });
    await evalError(capped.prune({ before: 1, olderThan: 2 } as never), 'invalid_prune_options', { field: 'olderThan' });
    await evalError(capped.prune(null as never), 'invalid_prune_options', { field: 'options' });
    const b64 = (value: unknown) => Buffer.from(canonicalJson(value)).toString('base64url');
    for (const cursor of ['x!', b64(['elsewhere']), b64(['jobs', 'a', 'b']), b64(['sets', 'a', 'b']), b64(['baselines', 1, 2, 3])]) {
      await evalError(capped.prune({ before: 1, cursor }), 'invalid_eval_cursor');
    }
    expect(await capped.prune({ before: 1, cursor: b64(['sets']) })).toMatchObject({ scanned: 0, has_more: false });
  });
});

describe('database failures', () => {
  const h = useEvalHarness('each');

  it('every method is bounded by statementTimeoutMs: a blocked transaction is eval_store_unavailable with the SQLSTATE only', async () => {
    const store = await h().store({ statementTimeoutMs: 200 });
    await h().sql('BEGIN');
    await h().sql(`SELECT * FROM agent_runtime_eval_usage WHERE scope_app = '' FOR UPDATE`);
    try {
      const error = await evalError(store.createEvaluation(A, preparedRequest()), 'eval_store_unavailable', { sqlstate: '57014', socket_error: null });
      expect(error.message).toBe('eval_store_unavailable {"sqlstate":"57014","socket_error":null}');
    } finally {
      await h().sql('ROLLBACK');
    }
    expect((await store.createEvaluation(A, preparedRequest())).phase).toBe('queued');
  });

  it('a lost database is eval_store_unavailable; opening the dedicated connection retries connectRetries times', async () => {
    const proxy = await startTcpProxy(h().database.url);
    const dataSource = await h().dataSource({}, proxy.url);
    const store = await h().store({ connectRetries: 2 }, {}, dataSource);
    const job = await store.createEvaluation(A, preparedRequest());
    await proxy.sever();
    const failure = await evalError(store.getJob(A, job.job_id), 'eval_store_unavailable');
    expect(Object.keys(failure.details ?? {}).sort()).toEqual(['socket_error', 'sqlstate']);
    const startedAt = Date.now();
    await evalError(store.openDedicatedConnection(), 'eval_store_unavailable', { attempts: 3, sqlstate: null, socket_error: 'ECONNREFUSED' });
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(900);
  });

  it('a DataSource that is not initialised is eval_store_unavailable, and the store serves once it is', async () => {
    const dataSource = await h().dataSource();
    await dataSource.destroy();
    const store = await h().store({}, {}, dataSource);
    await evalError(store.getJob(A, 'eval-' + 'a'.repeat(32)), 'eval_store_unavailable', { sqlstate: null, socket_error: null });
    await evalError(store.recover(), 'eval_store_unavailable');
    await evalError(store.openDedicatedConnection(), 'eval_store_unavailable');
    await dataSource.initialize();
    expect(await store.recover()).toBe(0);
  });

  it('the dedicated connection is a working unpooled connection the caller closes', async () => {
    const store = await h().store();
    const connection = await store.openDedicatedConnection();
    h().track(() => connection.end());
    expect((await connection.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });
});
