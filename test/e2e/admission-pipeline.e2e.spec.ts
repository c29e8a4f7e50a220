/**
 * HTTP end-to-end tests of where admission sits in the Nest pipeline (spec 01 §12): release after
 * the handler's observable completes or errors, after a throwing handler, after a failing pipe, via
 * the response `close` fallback after a later guard throws; class and handler `@Admission`;
 * `@AdmissionPermit()`; a global `AdmissionGuard`; broken agent resolvers.
 */
import { BadRequestException, ConflictException } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AdmissionGuard } from '../../src/admission/admission.guard';
import { settleTime, useApps, waitFor, type TestApp } from './support/harness';
import { RESOLVER_CANARY } from './support/routes';

const started = (t: TestApp, key: string) => waitFor(() => t.probe.started.includes(key), `handler ${key} to start`);
const idle = (t: TestApp) => waitFor(() => t.status().active === 0 && t.status().queue_length === 0, 'the controller to be idle');

describe('admission over HTTP: the Nest pipeline', () => {
  const start = useApps();

  describe('release when the handler settles', () => {
    it('holds the permit while the handler observable is open and releases it when it completes', async () => {
      const t = await start();
      const call = t.http.get('/work/pair/observable/o1');
      await started(t, 'o1');
      await settleTime(100);
      expect(t.activeOf('pair')).toBe(1);
      expect(call.settled()).toBe(false);

      t.probe.complete('o1', { streamed: 'done' });
      const result = await call.result;
      expect(result.status).toBe(200);
      expect(result.body).toEqual({ streamed: 'done' });
      await idle(t);
      expect(t.outcomes('pair')).toEqual(['granted', 'released']);
    });

    it('releases when the handler observable errors (status as thrown)', async () => {
      const t = await start();
      const call = t.http.get('/work/pair/observable/o2');
      await started(t, 'o2');
      expect(t.activeOf('pair')).toBe(1);

      t.probe.error('o2', new ConflictException({ status_code: 409, error: 'Conflict', code: 'stream_failed' }));
      const result = await call.result;
      expect(result.status).toBe(409);
      expect(result.body).toEqual({ status_code: 409, error: 'Conflict', code: 'stream_failed' });
      await idle(t);
      expect(t.outcomes('pair')).toEqual(['granted', 'released']);
    });

    it('releases after a handler that throws an HttpException (4xx as thrown) and not before', async () => {
      const t = await start();
      const call = t.http.get('/work/pair/default/h1');
      await started(t, 'h1');
      await settleTime(100);
      expect(t.activeOf('pair')).toBe(1);
      expect(t.count('released')).toBe(0);

      t.probe.fail('h1', new BadRequestException({ status_code: 400, error: 'Bad Request', code: 'handler_said_no' }));
      const result = await call.result;
      expect(result.status).toBe(400);
      expect(result.body).toEqual({ status_code: 400, error: 'Bad Request', code: 'handler_said_no' });
      await idle(t);
      expect(t.outcomes('pair')).toEqual(['granted', 'released']);
    });

    it('releases after a handler that throws a plain error (500)', async () => {
      const t = await start();
      const call = t.http.get('/work/pair/default/h2');
      await started(t, 'h2');
      expect(t.activeOf('pair')).toBe(1);

      t.probe.fail('h2', new Error('handler crashed'));
      const result = await call.result;
      expect(result.status).toBe(500);
      expect(result.text).not.toContain('handler crashed');
      await idle(t);
      expect(t.outcomes('pair')).toEqual(['granted', 'released']);
    });

    it('releases when the ValidationPipe rejects the body (400) before the handler runs', async () => {
      const t = await start();
      const bad = await t.http.send('/work/pair/validated/v1', { method: 'POST', body: { n: 'not-a-number' } }).result;
      expect(bad.status).toBe(400);
      expect(t.probe.started).toEqual([]);
      await idle(t);
      expect(t.outcomes('pair')).toEqual(['granted', 'released']);

      // the same route with a valid body is admitted and answers
      const good = t.http.send('/work/pair/validated/v2', { method: 'POST', body: { n: 3 } });
      await started(t, 'v2');
      expect(t.activeOf('pair')).toBe(1);
      t.probe.finish('v2');
      const result = await good.result;
      expect(result.status).toBe(201);
      expect(result.body).toEqual({ key: 'v2', agent_id: 'pair', permit_id_ok: true, n: 3 });
      await idle(t);
      expect(t.outcomes('pair')).toEqual(['granted', 'released', 'granted', 'released']);
    });

    it('releases through the response close fallback when a later guard throws (no interceptor reached)', async () => {
      const t = await start();
      const denied = await t.http.get('/work/solo/denied/d1').result;
      expect(denied.status).toBe(403);
      expect(denied.body).toEqual({ status_code: 403, error: 'Forbidden', code: 'denied_by_test_guard' });
      // the later guard ran while the permit was held
      expect(t.probe.notes).toEqual([{ guard: 'deny', key: 'd1', active_when_denied: 1 }]);
      expect(t.probe.started).toEqual([]);
      await idle(t);
      expect(t.outcomes('solo')).toEqual(['granted', 'released']);

      // the slot of `solo` (limit 1) is really free again
      const next = t.http.get('/work/solo/reject/after');
      await started(t, 'after');
      t.probe.finish('after');
      expect((await next.result).status).toBe(200);
    });

    it('the close fallback also works on a keep-alive connection that stays open', async () => {
      const t = await start();
      for (const key of ['k1', 'k2', 'k3']) {
        const denied = await t.http.send(`/work/solo/denied/${key}`, { keepAlive: true }).result;
        expect(denied.status).toBe(403);
        expect(denied.headers.connection).toBe('keep-alive');
        await idle(t);
      }
      expect(t.outcomes('solo')).toEqual(['granted', 'released', 'granted', 'released', 'granted', 'released']);
      expect(t.probe.notes.map((note) => note.active_when_denied)).toEqual([1, 1, 1]);
    });
  });

  describe('streams, misconfigured routes, clients gone before admission', () => {
    it('admits a handler that returns a stream for producing it, not for its transfer', async () => {
      const t = await start();
      const call = t.http.get('/work/pair/stream/s1');
      await started(t, 's1');
      t.probe.write('s1', 'first chunk;');
      // the handler has returned its stream: the slot is back while the transfer goes on
      await idle(t);
      expect(call.settled()).toBe(false);
      expect(t.outcomes('pair')).toEqual(['granted', 'released']);

      t.probe.end('s1', 'last chunk');
      const result = await call.result;
      expect(result.status).toBe(200);
      expect(result.text).toBe('first chunk;last chunk');
    });

    it('answers 500 invalid_admission_options for a route whose admission options are invalid', async () => {
      const t = await start();
      const result = await t.http.get('/work/pair/misconfigured/m1').result;
      expect(result.status).toBe(500);
      expect(result.body).toEqual({ status_code: 500, error: 'Internal Server Error', code: 'invalid_admission_options' });
      expect(result.headers['retry-after']).toBeUndefined();
      expect(t.probe.started).toEqual([]);
      expect(t.decisions).toEqual([]);
      expect(t.status().active).toBe(0);
    });

    it.each([
      ['(an earlier guard was slow) holds no capacity and its handler never runs', '/work/solo/slow/early'],
      ['with a later guard that throws leaks no permit', '/work/solo/slow-denied/early'],
    ])('a client gone before AdmissionGuard runs %s', async (_case, path) => {
      const t = await start();
      const call = t.http.get(path);
      await waitFor(() => t.probe.notes.some((note) => note.key === 'early' && note.waiting), 'the slow guard to hold the request');
      call.abort();
      await waitFor(() => t.probe.notes.some((note) => note.key === 'early' && note.closed), 'the server to see the disconnect');

      t.probe.finish('slow:early');
      await settleTime(300);
      expect(t.probe.started).toEqual([]);
      expect(t.status()).toMatchObject({ active: 0, queue_length: 0 });

      // solo (limit 1) is free for the next client
      const next = t.http.get('/work/solo/reject/next');
      await started(t, 'next');
      t.probe.finish('next');
      expect((await next.result).status).toBe(200);
    });
  });

  describe('class-level and handler-level @Admission', () => {
    it('takes one permit per request and the handler metadata wins', async () => {
      const t = await start();
      const first = t.http.get('/layered/both/b1');
      await started(t, 'b1');
      expect(t.status()).toMatchObject({ active: 1, queue_length: 0 });
      expect(Object.keys(t.status().per_agent)).toEqual(['handler-agent']);
      // handler-agent has limit 2: a second request fits only if the first took a single permit
      const second = t.http.get('/layered/both/b2');
      await started(t, 'b2');
      expect(t.status().active).toBe(2);

      t.probe.finish('b1');
      t.probe.finish('b2');
      const results = await Promise.all([first.result, second.result]);
      expect(results.map((result) => result.status)).toEqual([200, 200]);
      expect(results.map((result) => result.body.agent_id)).toEqual(['handler-agent', 'handler-agent']);
      await idle(t);
      expect(t.count('granted', 'handler-agent')).toBe(2);
      expect(t.count('released', 'handler-agent')).toBe(2);
      expect(t.outcomes('class-agent')).toEqual([]);
      expect(t.decisions).toHaveLength(4);
    });

    it('uses the class metadata on a handler without its own', async () => {
      const t = await start();
      const call = t.http.get('/layered/class-only/c1');
      await started(t, 'c1');
      expect(t.activeOf('class-agent')).toBe(1);
      t.probe.finish('c1');
      const result = await call.result;
      expect(result.status).toBe(200);
      expect(result.body).toEqual({ key: 'c1', agent_id: 'class-agent', permit_id_ok: true });
      await idle(t);
      expect(t.outcomes()).toEqual(['granted', 'released']);
    });
  });

  describe('@AdmissionPermit() and a global AdmissionGuard', () => {
    it('gives undefined permit and signal on a route without @Admission', async () => {
      const t = await start();
      const result = await t.http.get('/open').result;
      expect(result.status).toBe(200);
      expect(result.body).toEqual({ permit: 'undefined', signal: 'undefined' });
      expect(t.decisions).toEqual([]);
    });

    it('with AdmissionGuard as APP_GUARD: routes without @Admission pass untouched, admitted routes take one permit', async () => {
      const t = await start({ providers: [{ provide: APP_GUARD, useClass: AdmissionGuard }] });

      const open = await t.http.get('/open').result;
      expect(open.status).toBe(200);
      expect(open.body).toEqual({ permit: 'undefined', signal: 'undefined' });
      expect(t.decisions).toEqual([]);

      // an admitted route: the global guard and the route guard share one permit
      const held = t.http.get('/work/solo/reject/g1');
      await started(t, 'g1');
      expect(t.status().active).toBe(1);
      const refused = await t.http.get('/work/solo/reject/g2').result;
      expect(refused.status).toBe(429);

      // solo is full, but the route without admission still passes and takes nothing
      const stillOpen = await t.http.get('/open').result;
      expect(stillOpen.status).toBe(200);
      expect(stillOpen.body).toEqual({ permit: 'undefined', signal: 'undefined' });

      t.probe.finish('g1');
      const result = await held.result;
      expect(result.status).toBe(200);
      expect(result.body).toEqual({ key: 'g1', agent_id: 'solo', permit_id_ok: true });
      await idle(t);
      expect(t.outcomes()).toEqual(['granted', 'rejected', 'released']);
    });
  });

  describe('broken agent resolvers', () => {
    it.each(['throws', 'throws-http', 'empty', 'too-long', 'not-a-string', 'lone-surrogate', 'undefined'])(
      'resolver %s → 500 invalid_admission_options without its exception text',
      async (kind) => {
        const t = await start();
        const result = await t.http.get(`/broken/${kind}`).result;
        expect(result.status).toBe(500);
        expect(result.body).toEqual({ status_code: 500, error: 'Internal Server Error', code: 'invalid_admission_options' });
        expect(result.headers['retry-after']).toBeUndefined();
        expect(result.text).not.toContain(RESOLVER_CANARY);
        expect(JSON.stringify(result.headers)).not.toContain(RESOLVER_CANARY);
        expect(t.logger.entries.map((entry) => entry.text).join('\n')).not.toContain(RESOLVER_CANARY);
        expect(t.probe.started).toEqual([]);
        expect(t.decisions).toEqual([]);
        expect(t.status()).toMatchObject({ active: 0, queue_length: 0 });
      },
    );
  });
});
