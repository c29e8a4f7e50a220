/**
 * HTTP end-to-end tests of where admission sits in the Nest pipeline (spec 01 §12): release after
 * the handler's observable completes or errors, after a throwing handler, after a failing pipe, via
 * the response `close` fallback after a later guard throws; class and handler `@Admission`;
 * `@AdmissionPermit()`; a global `AdmissionGuard`; broken agent resolvers.
 * Every test runs for the local and the cluster controller (`ADMISSION_VARIANTS` of the harness, spec 08 §3);
 * the few that are process-local say why they are local only.
 */
import { BadRequestException, ConflictException, type ExecutionContext } from '@nestjs/common';
import { APP_GUARD, HttpAdapterHost, Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AdmissionController } from '../../src/admission/admission-controller';
import { Admission } from '../../src/admission/admission.decorator';
import { AdmissionError } from '../../src/admission/admission.errors';
import { AdmissionGuard } from '../../src/admission/admission.guard';
import { ADMISSION_VARIANTS, localOnly, settleTime, useApps, waitFor, type TestApp } from './support/harness';
import { RESOLVER_CANARY } from './support/routes';

const started = (t: TestApp, key: string) => waitFor(() => t.probe.started.includes(key), `handler ${key} to start`);
const idle = (t: TestApp) => waitFor(() => t.status().active === 0 && t.status().queue_length === 0, 'the controller to be idle');

describe.each(ADMISSION_VARIANTS)('%s controller', (variant) => {
  describe('admission over HTTP: the Nest pipeline', () => {
    const start = useApps(variant);

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
      it.each(['throws', 'throws-http', 'not-a-string', 'undefined'])(
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

      it.each(['empty', 'too-long', 'lone-surrogate'])('resolver answering an invalid id (%s) → 400 invalid_agent_id, nothing admitted', async (kind) => {
        const t = await start();
        const result = await t.http.get(`/broken/${kind}`).result;
        expect(result.status).toBe(400);
        expect(result.body).toEqual({ status_code: 400, error: 'Bad Request', code: 'invalid_agent_id' });
        expect(result.headers['retry-after']).toBeUndefined();
        expect(t.probe.started).toEqual([]);
        expect(t.decisions).toEqual([]);
        expect(t.status()).toMatchObject({ active: 0, queue_length: 0 });
      });

      it('a fixed agent id that breaks the id rule is a route misconfiguration → 500 invalid_admission_options', async () => {
        const t = await start();
        const result = await t.http.get('/broken-fixed').result;
        expect(result.status).toBe(500);
        expect(result.body).toEqual({ status_code: 500, error: 'Internal Server Error', code: 'invalid_admission_options' });
        expect(t.decisions).toEqual([]);
      });
    });
    describe('the route signal and the permit', () => {
      it('revoking the permit while the handler runs aborts @AdmissionSignal with permit_revoked; the later release is a no-op', async () => {
        const t = await start();
        const call = t.http.get('/work/pair/default/rv');
        await started(t, 'rv');
        const permit = t.probe.permits.get('rv');
        expect(permit).toBeDefined();
        expect(t.admission.cancel(permit!.requestRef)).toBe(true);
        const reason = await waitFor(() => t.probe.aborted.get('rv'), 'the route signal to abort');
        expect(reason).toBeInstanceOf(AdmissionError);
        expect(reason).toMatchObject({ code: 'permit_revoked', details: { outcome: 'cancelled' } });
        expect(t.status().active).toBe(0);
        t.probe.finish('rv');
        expect((await call.result).status).toBe(200);
        await settleTime(50);
        expect(t.outcomes('pair')).toEqual(['granted', 'cancelled']);
      });
    });

    describe('the guard on a real socket, called directly', () => {
      class DirectRoutes {
        run(): void {}
      }
      Reflect.decorate([Admission('direct', { overflow: 'queue' })], DirectRoutes.prototype, 'run', Object.getOwnPropertyDescriptor(DirectRoutes.prototype, 'run'));

      /** Serves one request at a time to `onRequest`; the test decides when to answer. */
      async function directServer(onRequest: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
        const server = http.createServer(onRequest);
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
      }

      // it builds an AdmissionController itself, and a cluster submit is never answered synchronously
      localOnly(variant)('answers true synchronously when the permit is granted at once, a promise when queued; close releases without an interceptor', async () => {
        const controller = new AdmissionController({ defaultAgentLimit: 1, overflow: 'queue' });
        const guard = new AdmissionGuard(new Reflector(), controller, { httpAdapter: { setHeader: () => undefined } } as unknown as HttpAdapterHost);
        const answers: Array<boolean | Promise<boolean>> = [];
        const responses: http.ServerResponse[] = [];
        const { server, url } = await directServer((req, res) => {
          const context = new ExecutionContextHost([req, res, () => undefined], DirectRoutes, DirectRoutes.prototype.run);
          context.setType('http');
          answers.push(guard.canActivate(context as ExecutionContext) as boolean | Promise<boolean>);
          responses.push(res);
        });
        try {
          const first = fetch(url);
          await waitFor(() => answers.length === 1, 'the first request');
          expect(answers[0]).toBe(true);
          expect(controller.status().active).toBe(1);

          const second = fetch(url);
          await waitFor(() => answers.length === 2, 'the second request');
          expect(answers[1]).toBeInstanceOf(Promise);
          expect(controller.status().queue_length).toBe(1);

          // no interceptor ever attached: the response's close is the release
          responses[0].end('one');
          await expect(answers[1]).resolves.toBe(true);
          expect(controller.status()).toMatchObject({ active: 1, queue_length: 0 });
          responses[1].end('two');
          expect(await (await first).text()).toBe('one');
          expect(await (await second).text()).toBe('two');
          await waitFor(() => controller.status().active === 0, 'the last permit to come back');
        } finally {
          server.closeAllConnections();
          await new Promise((resolve) => server.close(resolve));
        }
      });
    });
  });
});
