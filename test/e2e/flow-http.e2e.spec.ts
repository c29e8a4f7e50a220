/**
 * HTTP end-to-end tests of flow control (spec 09 §5, §10; spec 01 §12) through a real Nest app on a
 * real socket: `Retry-After` from `retry_after_ms`, bodies that name the refusing scope, and the
 * `@Admission` flow options (tenant, cost, priority) resolved from the request.
 */
import { Controller, Get, Inject, type INestApplication, Param, Post } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import type { AddressInfo } from 'node:net';
import { AdmissionController } from '../../src/admission/admission-controller';
import type { AdmissionConfig } from '../../src/admission/admission-config';
import type { AdmissionRequestOptions } from '../../src/admission/admission-request';
import { Admission } from '../../src/admission/admission.decorator';
import { AdmissionError } from '../../src/admission/admission.errors';
import { AdmissionModule } from '../../src/admission/admission.module';
import { AgentRuntimeExceptionFilter } from '../../src/http/agent-runtime-exception.filter';
import { AdmissionStatusController, REFERENCE_PRINCIPALS } from '../../src/reference-app/status.controller';
import { RunnerError } from '../../src/runner/runner.errors';
import { HttpClient, type HttpResult } from './support/http-client';

const CANARY = 'resolver-canary-7c1e';

/** A gate per key: a held handler keeps its permit until the test opens it. */
class Holds {
  readonly #open = new Map<string, () => void>();
  readonly started = new Set<string>();
  hold(key: string): Promise<void> {
    this.started.add(key);
    return new Promise((resolve) => this.#open.set(key, resolve));
  }
  release(key: string): void {
    this.#open.get(key)?.();
  }
  releaseAll(): void {
    for (const open of this.#open.values()) open();
    this.#open.clear();
    this.started.clear();
  }
}
const HOLDS = new Holds();

type Req = { headers: Record<string, string | undefined>; params: Record<string, string> };
const requestOf = (ctx: { switchToHttp(): { getRequest<T>(): T } }) => ctx.switchToHttp().getRequest<Req>();
const tenantHeader = (ctx: Parameters<typeof requestOf>[0]) => String(requestOf(ctx).headers['x-tenant'] ?? '');

@Controller('flow')
class FlowRoutes {
  @Post('tenant/:key')
  @Admission('chat', { tenant: tenantHeader, cost: (ctx) => Number(requestOf(ctx).headers['x-cost'] ?? 1), priority: 'high' })
  async tenant(@Param('key') key: string): Promise<{ done: string }> {
    await HOLDS.hold(key);
    return { done: key };
  }

  @Post('optional-tenant/:key')
  @Admission('chat', { tenant: (ctx) => requestOf(ctx).headers['x-tenant'] })
  async optionalTenant(@Param('key') key: string): Promise<{ done: string }> {
    await HOLDS.hold(key);
    return { done: key };
  }

  @Post('fixed/:key')
  @Admission('pair')
  async fixed(@Param('key') key: string): Promise<{ done: string }> {
    await HOLDS.hold(key);
    return { done: key };
  }

  @Post('throwing-tenant')
  @Admission('chat', {
    tenant: () => {
      throw new Error(CANARY);
    },
  })
  throwingTenant(): string {
    return 'never';
  }

  @Post('numeric-tenant')
  @Admission('chat', { tenant: (() => 42) as never })
  numericTenant(): string {
    return 'never';
  }

  @Post('string-cost')
  @Admission('chat', { cost: (() => 'a lot') as never })
  stringCost(): string {
    return 'never';
  }

  @Get('throw/rate-limited')
  rateLimited(): never {
    throw new AdmissionError('rate_limited', { limit_scope: 'global', retry_after_ms: 2500 });
  }

  @Get('throw/runner-rate-limited')
  runnerRateLimited(): never {
    throw new RunnerError('admission_failed', { reason: 'rate_limited', limit_scope: 'tenant', retry_after_ms: 4001 });
  }
}

/** The real controller, recording what each submit was asked for. */
class RecordingAdmissionController extends AdmissionController {
  readonly submits: { agentId: string; opts: AdmissionRequestOptions | undefined }[] = [];
  override submit(agentId: string, opts?: AdmissionRequestOptions) {
    this.submits.push({ agentId, opts: opts && { tenant: opts.tenant, cost: opts.cost, priority: opts.priority } });
    return super.submit(agentId, opts);
  }
}

async function startApp(config: AdmissionConfig): Promise<{ app: INestApplication; http: HttpClient; controller: RecordingAdmissionController }> {
  const controller = new RecordingAdmissionController(config);
  const moduleRef = await Test.createTestingModule({
    imports: [AdmissionModule.forRoot(config)],
    controllers: [FlowRoutes, AdmissionStatusController],
    // the reference status route shows tenant ids to approvers only: every caller here is one
    providers: [{ provide: APP_FILTER, useClass: AgentRuntimeExceptionFilter }, { provide: REFERENCE_PRINCIPALS, useValue: () => ({ id: 'operator', roles: ['approver'] }) }],
  })
    .overrideProvider(AdmissionController)
    .useValue(controller)
    .compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.listen(0, '127.0.0.1');
  const http = new HttpClient(`http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`);
  return { app, http, controller };
}

const waitFor = async (predicate: () => boolean, what: string, timeoutMs = 5000): Promise<void> => {
  const until = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

const post = (http: HttpClient, path: string, headers: Record<string, string> = {}) => http.send(path, { method: 'POST', headers });

describe('flow control over HTTP (spec 09)', () => {
  let current: { app: INestApplication; http: HttpClient; controller: RecordingAdmissionController } | undefined;
  const start = async (config: AdmissionConfig) => (current = await startApp(config));
  afterEach(async () => {
    HOLDS.releaseAll();
    await current?.app.close();
    current = undefined;
  });

  describe('Retry-After and the refusing scope (spec 09 §5, §10)', () => {
    it('rate_limited with a 2.5 s wait answers 429, Retry-After "3", and names the scope', async () => {
      const { http } = await start({ overflow: 'reject', rates: { tenants: { acme: { requestsPerMinute: 24 } } } });
      const first = post(http, '/flow/tenant/r1', { 'x-tenant': 'acme' });
      await waitFor(() => HOLDS.started.has('r1'), 'the first request to be admitted');
      const refused = await post(http, '/flow/tenant/r2', { 'x-tenant': 'acme' }).result;
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBe('3');
      expect(refused.body).toEqual({
        status_code: 429,
        error: 'Too Many Requests',
        code: 'rate_limited',
        details: { limit_scope: 'tenant', retry_after_ms: expect.any(Number) },
      });
      expect(refused.body.details.retry_after_ms).toBeGreaterThan(2000);
      expect(refused.body.details.retry_after_ms).toBeLessThanOrEqual(2500);
      HOLDS.release('r1');
      expect((await first.result).status).toBe(201);
    });

    it('a tenant at its own limit is refused with limit_scope tenant and Retry-After "1"', async () => {
      const { http } = await start({ overflow: 'reject', tenantLimits: { acme: 1 } });
      const first = post(http, '/flow/tenant/t1', { 'x-tenant': 'acme' });
      await waitFor(() => HOLDS.started.has('t1'), 'the first request to be admitted');
      const refused = await post(http, '/flow/tenant/t2', { 'x-tenant': 'acme' }).result;
      expect({ status: refused.status, retryAfter: refused.headers['retry-after'], body: refused.body }).toEqual({
        status: 429,
        retryAfter: '1',
        body: { status_code: 429, error: 'Too Many Requests', code: 'concurrency_limit_reached', details: { limit_scope: 'tenant' } },
      });
      // another tenant is not held back by acme's limit
      const other = post(http, '/flow/tenant/t3', { 'x-tenant': 'globex' });
      await waitFor(() => HOLDS.started.has('t3'), 'the other tenant to be admitted');
      HOLDS.release('t1');
      HOLDS.release('t3');
      expect([(await first.result).status, (await other.result).status]).toEqual([201, 201]);
    });

    it('an agent at its limit is refused with limit_scope agent (no limit_kind for a count)', async () => {
      const { http } = await start({ overflow: 'reject', agentLimits: { pair: 1 } });
      const first = post(http, '/flow/fixed/a1');
      await waitFor(() => HOLDS.started.has('a1'), 'the first request to be admitted');
      const refused = await post(http, '/flow/fixed/a2').result;
      expect({ status: refused.status, retryAfter: refused.headers['retry-after'], body: refused.body }).toEqual({
        status: 429,
        retryAfter: '1',
        body: { status_code: 429, error: 'Too Many Requests', code: 'concurrency_limit_reached', details: { limit_scope: 'agent' } },
      });
      HOLDS.release('a1');
      expect((await first.result).status).toBe(201);
    });

    it('the global exception filter sends the seconds of an AdmissionError thrown by a handler', async () => {
      const { http } = await start({});
      const result = await http.get('/flow/throw/rate-limited').result;
      expect({ status: result.status, retryAfter: result.headers['retry-after'], body: result.body }).toEqual({
        status: 429,
        retryAfter: '3',
        body: { status_code: 429, error: 'Too Many Requests', code: 'rate_limited', details: { limit_scope: 'global', retry_after_ms: 2500 } },
      });
    });

    it("the Runner's admission_failed wrapping rate_limited carries Retry-After and the scope", async () => {
      const { http } = await start({});
      const result = await http.get('/flow/throw/runner-rate-limited').result;
      expect({ status: result.status, retryAfter: result.headers['retry-after'], body: result.body }).toEqual({
        status: 429,
        retryAfter: '5',
        body: { status_code: 429, error: 'Too Many Requests', code: 'admission_failed', details: { reason: 'rate_limited', limit_scope: 'tenant', retry_after_ms: 4001 } },
      });
    });
  });

  describe('@Admission flow options resolved from the request (spec 09 §1)', () => {
    it('passes the tenant from a header, the cost resolver and the fixed priority to the controller', async () => {
      const { http, controller } = await start({});
      const call = post(http, '/flow/tenant/p1', { 'x-tenant': 'acme', 'x-cost': '250' });
      await waitFor(() => HOLDS.started.has('p1'), 'the request to be admitted');
      expect(controller.submits).toEqual([{ agentId: 'chat', opts: { tenant: 'acme', cost: 250, priority: 'high' } }]);
      HOLDS.release('p1');
      expect((await call.result).body).toEqual({ done: 'p1' });
      await waitFor(() => controller.status().active === 0, 'the permit to be released');
    });

    it('a tenant resolver answering undefined leaves the tenant out: no tenant scope applies', async () => {
      const { http, controller } = await start({ defaultTenantLimit: 1 });
      const first = post(http, '/flow/optional-tenant/u1', {});
      const second = post(http, '/flow/optional-tenant/u2', {});
      await waitFor(() => HOLDS.started.has('u1') && HOLDS.started.has('u2'), 'both requests to be admitted beside a tenant limit of 1');
      expect(controller.submits.map((submit) => submit.opts)).toEqual([{ tenant: undefined }, { tenant: undefined }]);
      expect(controller.status().per_tenant).toEqual({});
      HOLDS.release('u1');
      HOLDS.release('u2');
      await Promise.all([first.result, second.result]);
    });

        it('/admission/status shows the tenant while its request is held', async () => {
      const { http } = await start({ tenantLimits: { acme: 4 } });
      const call = post(http, '/flow/tenant/s1', { 'x-tenant': 'acme', 'x-cost': '3' });
      await waitFor(() => HOLDS.started.has('s1'), 'the request to be admitted');
      const status = (await http.get('/admission/status').result).body;
      expect(status.per_tenant).toEqual({ acme: { active: 1, queued: 0, limit: 4, cost_in_use: 3 } });
      expect(status.other_tenants).toEqual({ count: 0, active: 0, queued: 0 });
      HOLDS.release('s1');
      await call.result;
    });

    it.each([
      ['too long', 'x'.repeat(257)],
      ['empty (no header)', undefined],
    ])('an invalid tenant id from the request (%s) is 400 invalid_tenant_id; nothing is admitted', async (_, tenant) => {
      const { http, controller } = await start({});
      const result = await post(http, '/flow/tenant/bad', tenant === undefined ? {} : { 'x-tenant': tenant }).result;
      expect({ status: result.status, body: result.body }).toEqual({ status: 400, body: { status_code: 400, error: 'Bad Request', code: 'invalid_tenant_id' } });
      expect(result.headers['retry-after']).toBeUndefined();
      expect(controller.submits).toEqual([]);
      expect(HOLDS.started.has('bad')).toBe(false);
    });

    it.each([
      ['a throwing tenant resolver', '/flow/throwing-tenant'],
      ['a tenant resolver answering a number', '/flow/numeric-tenant'],
      ['a cost resolver answering a string', '/flow/string-cost'],
    ])('%s is a broken route: 500 invalid_admission_options without its text; nothing is admitted', async (_, path) => {
      const { http, controller } = await start({});
      const result = await post(http, path).result;
      expect({ status: result.status, body: result.body }).toEqual({ status: 500, body: { status_code: 500, error: 'Internal Server Error', code: 'invalid_admission_options' } });
      expect(result.text).not.toContain(CANARY);
      expect(controller.submits).toEqual([]);
      expect(controller.status().active).toBe(0);
    });
  });
});
