import * as http from 'node:http';
import { referenceAdmissionConfig, TRIAL_TENANT } from '../../src/reference-app/reference-config';
import { ANONYMOUS_TENANT, TENANT_HEADER } from '../../src/reference-app/reference-tenant';
import { createFreshDatabase, type FreshDatabase } from '../support/fresh-database';
import { RecordingLogger } from './support/harness';
import type { HttpResult } from './support/http-client';
import { startReferenceService, type ReferenceService } from './support/reference-service';

/**
 * Flow control (spec 09) over the reference service as `npm start` configures it (a queue long enough
 * for a flood of 50), on one instance and in cluster mode (`CLUSTER=1`, spec 09 §9): tenants from the
 * `x-tenant-id` header, fair share across them, a tenant limit, and the trial tenant's request rate.
 */
describe.each([
  ['one instance', undefined],
  ['cluster mode', { instanceId: 'flow-e2e' }],
] as const)('reference service flow control (spec 09), %s', (_mode, cluster) => {
  const logger = new RecordingLogger();
  let database: FreshDatabase | undefined;
  let service: ReferenceService;

  beforeAll(async () => {
    database = await createFreshDatabase();
    const admission = referenceAdmissionConfig({ ADMISSION_MAX_QUEUE: '64' });
    service = await startReferenceService({ databaseUrl: database.url, admission, ...(cluster ? { cluster } : {}) }, logger);
  }, 60_000);

  afterAll(async () => {
    await service?.app.close();
    await database?.drop();
  });

  const invoke = (tenant: string | null, agent: string, workMs: number, route: 'invoke' | 'invoke-now' = 'invoke') =>
    service.http.send(`/agents/${agent}/${route}`, { method: 'POST', body: { work_ms: workMs }, headers: tenant === null ? {} : { [TENANT_HEADER]: tenant } }).result;
  // the operator (an approver) sees tenant ids; see "tenant ids only for approvers" below
  const OPERATOR = { authorization: 'Bearer operator-token' };
  const status = async () => (await service.http.send('/admission/status', { headers: OPERATOR }).result).body;

  /** A POST with `x-tenant-id` sent once per value (two header lines), which the test client cannot send. */
  const invokeWithTenantHeaders = (values: string[]) =>
    new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
      const request = http.request(new URL('/agents/repeated/invoke-now', service.http.baseUrl), { method: 'POST', headers: { [TENANT_HEADER]: values, 'content-type': 'application/json' } }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
      });
      request.on('error', reject);
      request.end('{"work_ms":0}');
    });

  async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await read();
      if (done(value) || Date.now() > deadline) return value;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  describe('§3 fair share: one tenant floods an agent, another still gets its share', () => {
    it('answers each of the other tenant’s three calls within the next few grants, not after the flood’s queue', async () => {
      const WORK_MS = 200;
      // the order answers arrive in: with plain FIFO every flood call queued before bob's would come first
      const answered: string[] = [];
      const track = (who: string, call: Promise<HttpResult>) => call.then((result) => (answered.push(who), result));
      const flood = Array.from({ length: 50 }, () => track('alice', invoke('alice', 'flooded', WORK_MS)));
      const submitted = (s: Awaited<ReturnType<typeof status>>) =>
        s.per_tenant?.alice !== undefined && s.per_tenant.alice.active + s.per_tenant.alice.queued + answered.length === 50;
      // both permits held again: in cluster mode a release and the grant that follows are two decisions, so a
      // status read between them shows one running
      const during = await until(status, (s) => submitted(s) && s.per_agent?.flooded?.active === 2);
      expect(submitted(during)).toBe(true);
      // agent limit 2: two run, the rest wait; alice's tenant limit (3) is not what holds them
      expect(during.per_agent.flooded).toMatchObject({ active: 2, limit: 2 });
      expect(during.per_tenant.alice).toMatchObject({ active: 2, queued: during.per_agent.flooded.queued, limit: 3 });
      expect(during.other_tenants).toEqual({ count: 0, active: 0, queued: 0 });
      const floodQueued: number = during.per_tenant.alice.queued;
      // far more than the bound below, so plain FIFO would break it (fewer than 48: a cluster decides slower
      // than the first calls finish)
      expect(floodQueued).toBeGreaterThanOrEqual(20);

      const answeredBefore = answered.length;
      const started = Date.now();
      const bobResults = await Promise.all([1, 2, 3].map(() => track('bob', invoke('bob', 'flooded', WORK_MS))));
      const bobWaitedMs = Date.now() - started;
      expect(bobResults.map((result) => result.status)).toEqual([200, 200, 200]);

      // bob's last call is answered after at most the 2 running and 3 interleaved alice calls (one grant per
      // tenant in turn, +1 for a tie at the end); with FIFO all `floodQueued` (≥ 20) would come first
      const aliceDuringBob = answered.lastIndexOf('bob') - 2 - answeredBefore;
      expect(aliceDuringBob).toBeLessThanOrEqual(6);
      // and before the flood's queue could have drained (floodQueued × WORK_MS / 2), which FIFO waits out first
      expect(bobWaitedMs).toBeLessThan((floodQueued * WORK_MS) / 2);
      const results = await Promise.all(flood);
      expect(results.every((result) => result.status === 200)).toBe(true);
      expect(answered.filter((who) => who === 'alice')).toHaveLength(50);
    }, 40_000);
  });

  describe('§2 tenant limit: one tenant never holds the whole service', () => {
    it('holds a tenant at 3 of the 4 global permits across agents, so another tenant is admitted at once', async () => {
      const WORK_MS = 1_500;
      const alice = ['p', 'p', 'q', 'q'].map((agent) => invoke('alice', agent, WORK_MS));
      const held = await until(status, (s) => s.per_tenant?.alice?.active === 3 && s.per_tenant.alice.queued === 1);
      expect(held).toMatchObject({ active: 3, available: 1, per_tenant: { alice: { active: 3, queued: 1, limit: 3 } } });

      const started = Date.now();
      const carol = await invoke('carol', 'r', 0);
      expect(carol.status).toBe(200);
      // admitted while alice's three still run: without the tenant limit she would hold all four
      expect(Date.now() - started).toBeLessThan(WORK_MS);
      expect((await Promise.all(alice)).map((result) => result.status)).toEqual([200, 200, 200, 200]);
    }, 30_000);

    it('tenant ids only for approvers: anonymous callers and other users see every tenant folded into other_tenants', async () => {
      const WORK_MS = 1_500;
      const calls = [invoke('acme-corp', 'p', WORK_MS), invoke('globex-inc', 'q', WORK_MS)];
      const seen = await until(status, (s) => s.per_tenant?.['acme-corp']?.active === 1 && s.per_tenant?.['globex-inc']?.active === 1);
      expect(Object.keys(seen.per_tenant).sort()).toEqual(['acme-corp', 'globex-inc']);
      for (const headers of [{}, { authorization: 'Bearer alice-token' }] as Array<Record<string, string>>) {
        const answer = await service.http.send('/admission/status', { headers }).result;
        expect(answer.status).toBe(200);
        expect(answer.body.per_tenant).toEqual({});
        expect(answer.body.other_tenants).toMatchObject({ count: 2, active: 2 });
        expect(answer.text).not.toMatch(/acme-corp|globex-inc/);
      }
      expect((await Promise.all(calls)).map((result) => result.status)).toEqual([200, 200]);
    }, 30_000);

    it('counts calls without the header as the anonymous tenant', async () => {
      const call = invoke(null, 'anon', 1_000);
      const seen = await until(status, (s) => s.per_tenant?.[ANONYMOUS_TENANT]?.active === 1);
      expect(seen.per_tenant[ANONYMOUS_TENANT]).toMatchObject({ active: 1, queued: 0, limit: 3 });
      expect((await call).status).toBe(200);
    }, 30_000);

    it('refuses an empty tenant header with 400 invalid_tenant_id, admitting nothing', async () => {
      const refused = await invoke('', 'empty', 0);
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ status_code: 400, code: 'invalid_tenant_id' });
      expect((await status()).per_agent.empty).toBeUndefined();
    });

    it('refuses a repeated tenant header with 400 invalid_tenant_id: its joined value would be a fresh tenant without the limits or rate', async () => {
      for (const values of [[TRIAL_TENANT, TRIAL_TENANT], ['someone-else', TRIAL_TENANT]]) {
        const refused = await invokeWithTenantHeaders(values);
        expect(refused.status).toBe(400);
        expect(refused.body).toMatchObject({ status_code: 400, code: 'invalid_tenant_id' });
      }
      expect((await invokeWithTenantHeaders(['single'])).status).toBe(200);
      expect((await status()).per_agent.repeated).toBeUndefined();
    });
  });

  describe('§5 rates: the trial tenant starts 6 calls a minute, 2 at once', () => {
    it('answers the third immediate call 429 rate_limited with Retry-After in whole seconds; other tenants pass', async () => {
      const first = await invoke(TRIAL_TENANT, 'rated', 0, 'invoke-now');
      const second = await invoke(TRIAL_TENANT, 'rated', 0, 'invoke-now');
      expect([first.status, second.status]).toEqual([200, 200]);

      const refused = await invoke(TRIAL_TENANT, 'rated', 0, 'invoke-now');
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ status_code: 429, error: 'Too Many Requests', code: 'rate_limited' });
      // one request token every 10 s: Retry-After = ceil(retry_after_ms / 1000), a whole number of seconds ≥ 1
      const retryAfter = refused.headers['retry-after'];
      expect(retryAfter).toMatch(/^[1-9][0-9]*$/);
      expect(Number(retryAfter)).toBeLessThanOrEqual(10);
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(9);

      // the rate is the trial tenant's own
      expect((await invoke('dave', 'rated', 0, 'invoke-now')).status).toBe(200);
      expect((await invoke(null, 'rated', 0, 'invoke-now')).status).toBe(200);
      // the trial tenant is named in the configuration, so its decisions carry its id
      expect(logger.entries.map((entry) => entry.text).join('\n')).toMatch(/^rate_limited agent="rated" tenant="trial" wait_ms=0 /m);
    });
  });

  describe('§7 ids of tenants not named in the configuration', () => {
    it('never reach the decision log', async () => {
      expect((await invoke('zed-unlisted', 'logged', 0)).status).toBe(200);
      const log = logger.entries.map((entry) => entry.text).join('\n');
      expect(log).toMatch(/^granted agent="logged" wait_ms=/m);
      expect(log).not.toMatch(/zed-unlisted|alice|bob|carol|dave|anonymous/);
    });
  });
});
