/**
 * HTTP end-to-end tests of admission (spec 01 §12) through a real Nest app on a real socket:
 * reject and queue overflow, FIFO, queue deadlines and queue-full, and client disconnects while
 * queued or active.
 * Every test runs for the local and the cluster controller (`ADMISSION_VARIANTS` of the harness, spec 08 §3).
 */
import { ADMISSION_VARIANTS, useApps, waitFor, settleTime, type TestApp } from './support/harness';
import type { HttpResult } from './support/http-client';

const TOO_MANY = { status_code: 429, error: 'Too Many Requests' };
const UNAVAILABLE = { status_code: 503, error: 'Service Unavailable' };

/** Waits until the handler of `key` has started. */
const started = (t: TestApp, key: string) => waitFor(() => t.probe.started.includes(key), `handler ${key} to start`);

describe.each(ADMISSION_VARIANTS)('%s controller', (variant) => {
  describe('admission over HTTP: overflow, queueing, disconnects', () => {
    const start = useApps(variant);

    describe('reject mode (limit 2)', () => {
      it('admits two concurrent requests and refuses the third with 429 concurrency_limit_reached and Retry-After: 1', async () => {
        const t = await start();
        const calls = ['r1', 'r2', 'r3'].map((key) => ({ key, call: t.http.get(`/work/pair/reject/${key}`) }));

        // exactly one answer arrives while two handlers hold: the refusal
        const first = await Promise.race(calls.map(({ key, call }) => call.result.then((result) => ({ key, result }))));
        expect(first.result.status).toBe(429);
        expect(first.result.body).toEqual({ ...TOO_MANY, code: 'concurrency_limit_reached', details: { limit_scope: 'agent' } });
        expect(first.result.headers['retry-after']).toBe('1');
        expect(first.result.headers['content-type']).toMatch(/^application\/json/);

        const admitted = calls.filter(({ key }) => key !== first.key);
        await waitFor(() => t.probe.started.length === 2, 'two handlers to start');
        expect(t.probe.started.sort()).toEqual(admitted.map(({ key }) => key).sort());
        expect(t.status()).toMatchObject({ active: 2, queue_length: 0 });
        expect(t.activeOf('pair')).toBe(2);
        expect(admitted.every(({ call }) => !call.settled())).toBe(true);

        for (const { key } of admitted) t.probe.finish(key);
        const results = await Promise.all(admitted.map(({ call }) => call.result));
        for (const [i, result] of results.entries()) {
          expect(result.status).toBe(200);
          expect(result.body).toEqual({ key: admitted[i].key, agent_id: 'pair', permit_id_ok: true });
          expect(result.headers['retry-after']).toBeUndefined();
        }
        await waitFor(() => t.status().active === 0, 'every slot to come back');
        expect(t.count('granted', 'pair')).toBe(2);
        expect(t.count('rejected', 'pair')).toBe(1);
        expect(t.count('released', 'pair')).toBe(2);
        expect(t.count('queued', 'pair')).toBe(0);

        // the capacity is really back: a new request is admitted
        const again = t.http.get('/work/pair/reject/r4');
        await started(t, 'r4');
        t.probe.finish('r4');
        expect((await again.result).status).toBe(200);
      });

      it('counts the limit per agent: another agent is admitted while one is full', async () => {
        const t = await start();
        const a1 = t.http.get('/work/alpha/reject/a1');
        const a2 = t.http.get('/work/alpha/reject/a2');
        await waitFor(() => t.activeOf('alpha') === 2, 'alpha to be full');
        const refused = await t.http.get('/work/alpha/reject/a3').result;
        expect(refused.status).toBe(429);
        const other = t.http.get('/work/beta/reject/b1');
        await started(t, 'b1');
        t.probe.finishAll();
        expect((await other.result).status).toBe(200);
        expect((await a1.result).status).toBe(200);
        expect((await a2.result).status).toBe(200);
      });
    });

    describe('queue mode (limit 2)', () => {
      it('serves a third request after one of the first two finishes', async () => {
        const t = await start();
        const q1 = t.http.get('/work/pair/queue/q1');
        await started(t, 'q1');
        const q2 = t.http.get('/work/pair/queue/q2');
        await started(t, 'q2');
        const q3 = t.http.get('/work/pair/queue/q3');
        await waitFor(() => t.queuedOf('pair') === 1, 'q3 to be queued');

        await settleTime(100);
        expect(t.probe.started).toEqual(['q1', 'q2']);
        expect(q3.settled()).toBe(false);
        expect(t.status()).toMatchObject({ active: 2, queue_length: 1 });

        t.probe.finish('q2');
        expect((await q2.result).status).toBe(200);
        await started(t, 'q3');
        expect(t.status()).toMatchObject({ active: 2, queue_length: 0 });
        expect(q3.settled()).toBe(false);

        t.probe.finish('q1');
        t.probe.finish('q3');
        const [r1, r3] = await Promise.all([q1.result, q3.result]);
        expect(r1.status).toBe(200);
        expect(r3.status).toBe(200);
        expect(r3.body).toEqual({ key: 'q3', agent_id: 'pair', permit_id_ok: true });
        expect(t.outcomes('pair')).toEqual(['granted', 'granted', 'queued', 'released', 'granted', 'released', 'released']);
        // the queued request's grant reports the time it waited
        const queuedGrant = t.decisions.filter((event) => event.outcome === 'granted')[2];
        expect(queuedGrant.wait_ms).toBeGreaterThanOrEqual(50);
        await waitFor(() => t.status().active === 0, 'every slot to come back');
      });

      it('grants the queued requests of one agent in FIFO order, without blocking other agents', async () => {
        const t = await start();
        const head = t.http.get('/work/fifo/queue/head');
        await started(t, 'head');
        const keys = ['f1', 'f2', 'f3', 'f4', 'f5'];
        const queued = [];
        for (const [i, key] of keys.entries()) {
          queued.push(t.http.get(`/work/fifo/queue/${key}`));
          await waitFor(() => t.queuedOf('fifo') === i + 1, `${key} to be queued`);
        }

        // an agent at its own limit does not block another agent
        const other = t.http.get('/work/other/queue/o1');
        await started(t, 'o1');
        t.probe.finish('o1');
        expect((await other.result).status).toBe(200);
        expect(t.queuedOf('fifo')).toBe(5);

        t.probe.finish('head');
        for (const key of keys) {
          await started(t, key);
          expect(t.activeOf('fifo')).toBe(1);
          t.probe.finish(key);
        }
        const results = await Promise.all([head, ...queued].map((call) => call.result));
        expect(results.map((result: HttpResult) => result.status)).toEqual([200, 200, 200, 200, 200, 200]);
        expect(t.probe.started.filter((key) => key !== 'o1')).toEqual(['head', ...keys]);
        expect(results.map((result) => result.body.key)).toEqual(['head', ...keys]);
        await waitFor(() => t.status().active === 0, 'every slot to come back');
      });
    });

    describe('queue deadline and queue size', () => {
      it('answers 503 queue_deadline_exceeded with Retry-After: 1 when the route queueTimeoutMs passes', async () => {
        const t = await start();
        const holder = t.http.get('/work/solo/queue/holder');
        await started(t, 'holder');

        const startedAt = Date.now();
        const late = await t.http.get('/work/solo/short-queue/late').result;
        const waited = Date.now() - startedAt;
        expect(late.status).toBe(503);
        expect(late.body).toEqual({ ...UNAVAILABLE, code: 'queue_deadline_exceeded' });
        expect(late.headers['retry-after']).toBe('1');
        // the controller's timer expired it (route option 150 ms, not the 20 s default), while the holder still runs
        expect(waited).toBeGreaterThanOrEqual(100);
        expect(waited).toBeLessThan(5_000);
        expect(holder.settled()).toBe(false);
        expect(t.probe.started).toEqual(['holder']);
        expect(t.status()).toMatchObject({ active: 1, queue_length: 0 });
        expect(t.outcomes('solo')).toEqual(['granted', 'queued', 'expired']);

        t.probe.finish('holder');
        expect((await holder.result).status).toBe(200);
      });

      it('answers 429 admission_queue_full with Retry-After: 1 when the queue is full', async () => {
        const t = await start({ admission: { defaultAgentLimit: 1, maxQueue: 1, overflow: 'queue' } });
        const holder = t.http.get('/work/solo/default/holder');
        await started(t, 'holder');
        const waiting = t.http.get('/work/solo/default/waiting');
        await waitFor(() => t.status().queue_length === 1, 'one request to be queued');

        const full = await t.http.get('/work/solo/default/full').result;
        expect(full.status).toBe(429);
        expect(full.body).toEqual({ ...TOO_MANY, code: 'admission_queue_full' });
        expect(full.headers['retry-after']).toBe('1');
        expect(t.count('queue_full', 'solo')).toBe(1);
        expect(t.status()).toMatchObject({ active: 1, queue_length: 1 });

        t.probe.finish('holder');
        await started(t, 'waiting');
        t.probe.finish('waiting');
        expect((await holder.result).status).toBe(200);
        expect((await waiting.result).status).toBe(200);
        expect(t.probe.started).toEqual(['holder', 'waiting']);
      });
    });

    describe('client disconnects', () => {
      it('a client that disconnects while queued leaves no queue entry (telemetry requester_down)', async () => {
        const t = await start();
        const holder = t.http.get('/work/solo/queue/holder');
        await started(t, 'holder');
        const leaver = t.http.get('/work/solo/queue/leaver');
        await waitFor(() => t.queuedOf('solo') === 1, 'the leaver to be queued');

        leaver.abort();
        await waitFor(() => t.status().queue_length === 0, 'the queue entry to go');
        await waitFor(() => t.count('requester_down', 'solo') === 1, 'requester_down telemetry');
        expect(t.status()).toMatchObject({ active: 1, queue_length: 0 });
        expect(t.status().per_agent.solo).toEqual({ active: 1, queued: 0, limit: 1 });
        const down = t.decisions.find((event) => event.outcome === 'requester_down');
        expect(down).toMatchObject({ agent_id: 'solo', active: 1, queued: 0 });

        // the capacity the holder returns goes to nobody: the leaver never runs
        t.probe.finish('holder');
        expect((await holder.result).status).toBe(200);
        await waitFor(() => t.status().active === 0, 'the holder to release');
        await settleTime(100);
        expect(t.probe.started).toEqual(['holder']);
        expect(t.outcomes('solo')).toEqual(['granted', 'queued', 'requester_down', 'released']);
        expect(t.status().per_agent.solo).toBeUndefined();
      });

      it('a client that disconnects while active aborts the admission signal, but the slot returns only when the handler settles', async () => {
        const t = await start();
        const gone = t.http.get('/work/solo/queue/gone');
        await started(t, 'gone');
        expect(t.activeOf('solo')).toBe(1);

        gone.abort();
        const reason = await waitFor(() => t.probe.aborted.get('gone'), 'the handler signal to abort');
        expect(reason).toMatchObject({ name: 'AdmissionError', code: 'cancelled' });
        expect(t.probe.settled).toEqual([]);

        // the handler still runs: the permit is still held and the limit still holds
        await settleTime(100);
        expect(t.status()).toMatchObject({ active: 1, queue_length: 0 });
        expect(t.count('released', 'solo')).toBe(0);
        const refused = await t.http.get('/work/solo/reject/refused').result;
        expect(refused.status).toBe(429);
        expect(refused.body.code).toBe('concurrency_limit_reached');
        const next = t.http.get('/work/solo/queue/next');
        await waitFor(() => t.queuedOf('solo') === 1, 'the next request to be queued');
        await settleTime(100);
        expect(t.probe.started).toEqual(['gone']);
        expect(t.status().active).toBe(1);

        // the handler settles: the slot comes back and the queued request is granted
        t.probe.finish('gone');
        await started(t, 'next');
        expect(t.status()).toMatchObject({ active: 1, queue_length: 0 });
        expect(t.probe.aborted.has('next')).toBe(false);
        t.probe.finish('next');
        expect((await next.result).status).toBe(200);
        await waitFor(() => t.status().active === 0, 'every slot to come back');

        // the disconnected request was released (not revoked by its owner), exactly once
        expect(t.outcomes('solo')).toEqual(['granted', 'rejected', 'queued', 'released', 'granted', 'released']);
        expect(Math.max(...t.decisions.map((event) => event.active))).toBeLessThanOrEqual(1);
      });
    });
    describe('an invalid agent id from the path: the client is at fault (400), not the route (500)', () => {
      const BAD_ID = { status_code: 400, error: 'Bad Request', code: 'invalid_agent_id' };

      it.each([
        ['300 bytes long', 'x'.repeat(300)],
        ['257 bytes long', 'x'.repeat(257)],
        ['a newline and an ANSI escape', 'a%0A%1B%5B31mFAKE'],
        ['a NUL', 'a%00b'],
        ['a C1 control', 'a%C2%85b'],
        ['a DEL', 'a%7Fb'],
      ])('POST /agents/<id>/invoke with an id %s → 400 invalid_agent_id, no permit taken', async (_, id) => {
        const t = await start();
        const result = await t.http.send(`/agents/${id}/invoke`, { method: 'POST', body: {} }).result;
        expect(result.status).toBe(400);
        expect(result.body).toEqual(BAD_ID);
        expect(result.headers['retry-after']).toBeUndefined();
        expect(t.decisions).toEqual([]);
        expect(t.status()).toMatchObject({ active: 0, queue_length: 0 });
        expect(t.logger.entries.map((entry) => entry.text).join('\n')).not.toMatch(/FAKE|\u001b/);
      });

      it('admits an id of exactly 256 bytes, then releases it', async () => {
        const t = await start();
        const id = 'x'.repeat(256);
        const result = await t.http.send(`/agents/${id}/invoke`, { method: 'POST', body: {} }).result;
        expect(result.status).toBe(201);
        expect(result.body).toEqual({ agent_id: id });
        await waitFor(() => t.status().active === 0, 'the permit to come back');
        expect(t.outcomes()).toEqual(['granted', 'released']);
      });

      it('leaks no permit over many bad ids mixed with good ones', async () => {
        const t = await start();
        const paths = Array.from({ length: 20 }, (_, i) => (i % 2 ? `/agents/${'y'.repeat(300)}/invoke` : `/agents/good-${i}/invoke`));
        const results = await Promise.all(paths.map((path) => t.http.send(path, { method: 'POST', body: {} }).result));
        expect(results.map((result) => result.status)).toEqual(paths.map((_, i) => (i % 2 ? 400 : 201)));
        await waitFor(() => t.status().active === 0, 'every permit to come back');
        expect(t.count('granted')).toBe(10);
        expect(t.count('released')).toBe(10);
      });
    });
  });
});
