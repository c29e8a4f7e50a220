import type { INestApplication } from '@nestjs/common';
import { Client } from 'pg';
import { systemClock } from '../../src/shared/time/clock';
import { InvocationLedger } from '../../src/ledger/invocation-ledger';
import { LedgerError } from '../../src/ledger/ledger.errors';
import { LEASE_RECOVERY_SETTINGS, type LeaseRecoverySettings } from '../../src/reference-app/lease-recovery.service';
import { createFreshDatabase, type FreshDatabase } from '../support/fresh-database';
import { HttpClient, type HttpResult } from './support/http-client';
import { RecordingLogger } from './support/harness';
import { startReferenceService } from './support/reference-service';

const RECOVERY: LeaseRecoverySettings = Object.freeze({ intervalMs: 150, batchSize: 100, maxBatches: 10, clock: systemClock });
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The instance lock comes back by itself after an outage (reconnect with backoff up to 5 s). */
async function lockBack(ledger: InvocationLedger): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!ledger.lockHeld && Date.now() < deadline) await pause(50);
  expect(ledger.lockHeld).toBe(true);
}

/** Defect 4.7: after a Postgres outage under load no invocation stays `ready`, and expired `running` ones end `failed`. */
describe('reference service through a Postgres outage (defect 4.7)', () => {
  let database: FreshDatabase;
  let admin: Client;
  let app: INestApplication;
  let http: HttpClient;
  const logger = new RecordingLogger();

  beforeAll(async () => {
    database = await createFreshDatabase();
    admin = new Client({ connectionString: database.url });
    admin.on('error', () => {});
    await admin.connect();
    // rows a crashed instance left running, their leases long over
    await admin.query(`INSERT INTO agent_runtime_invocations (id, workflow_id, workflow_version, kind, checkpoint, phase, owner_token, owner_instance,
      lease_until_ms, revision, created_at_ms, updated_at_ms)
      SELECT 'orphan-' || g, 'helper', '1', 'agent_run', 'null', 'running', gen_random_uuid(), 'crashed-host', 1000 + g, 1, 0, 0 FROM generate_series(1, 12) g`);
    ({ app, http } = await startReferenceService(
      {
        databaseUrl: database.url,
        admission: { globalLimit: 32, defaultAgentLimit: 32, overflow: 'queue', maxQueue: 1000, defaultQueueTimeoutMs: 30_000, drainTimeoutMs: 5000 },
        logDecisions: false,
      },
      logger,
      (builder) => builder.overrideProvider(LEASE_RECOVERY_SETTINGS).useValue(RECOVERY),
    ));
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await admin?.end().catch(() => {});
    await database?.drop();
  });

  const phases = async () =>
    Object.fromEntries(
      (await admin.query(`SELECT phase, count(*)::int AS n FROM agent_runtime_invocations WHERE id NOT LIKE 'orphan-%' GROUP BY phase`)).rows.map(
        (row: { phase: string; n: number }) => [row.phase, row.n],
      ),
    );

  it('recovers the expired running rows it finds at start to failed, lease_expired, logging the count only', async () => {
    const { rows } = await admin.query(`SELECT DISTINCT phase, outcome, owner_token FROM agent_runtime_invocations WHERE id LIKE 'orphan-%'`);
    expect(rows).toEqual([{ phase: 'failed', outcome: { reason: 'lease_expired' }, owner_token: null }]);
    const lines = logger.entries.map((entry) => entry.text).filter((text) => text.includes('lease had expired'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^recovered 12 invocations whose lease had expired\b/);
    expect(lines[0]).not.toContain('orphan-');
  });

  it('leaves no invocation ready, and none running, when the database drops every connection again and again under load', async () => {
    let cutting = true;
    let cuts = 0;
    const cutter = (async () => {
      while (cutting) {
        const { rows } = await admin.query(
          `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
        );
        cuts += rows[0].n;
        await pause(40);
      }
    })();
    const results: Array<HttpResult | Error> = [];
    const invoke = async (i: number) => {
      const result = await http.send(`/agents/agent-${i % 8}/invoke`, { method: 'POST', body: { work_ms: i % 5 } }).result.catch((error: Error) => error);
      results.push(result);
    };
    const load: Array<Promise<void>> = [];
    for (let i = 0; i < 240; i++) {
      load.push(invoke(i));
      if (i % 24 === 23) await pause(40);
    }
    await Promise.all(load);
    cutting = false;
    await cutter;
    expect(cuts).toBeGreaterThan(5);
    const answered = results.filter((result): result is HttpResult => !(result instanceof Error));
    const ok = answered.filter((result) => result.status === 200);
    expect(answered.length).toBe(240);
    expect(answered.length - ok.length).toBeGreaterThan(0);
    const byPhase = await phases();
    expect(byPhase.ready).toBeUndefined();
    expect(byPhase.running).toBeUndefined();
    for (const result of ok) {
      const { rows } = await admin.query('SELECT phase FROM agent_runtime_invocations WHERE id = $1', [result.body.invocation_id]);
      expect(rows).toEqual([{ phase: 'completed' }]);
    }
    await lockBack(app.get(InvocationLedger));
    expect((await http.send('/agents/a/invoke', { method: 'POST', body: { work_ms: 0 } }).result).status).toBe(200);
  }, 60_000);

  it('fails an invocation whose lease ran out without its owner at the next periodic sweep', async () => {
    const ledger = app.get(InvocationLedger);
    await lockBack(ledger);
    const { ownerToken } = await ledger.createAndClaim('abandoned', { workflowId: 'helper', workflowVersion: '1', kind: 'agent_run' }, null, { leaseMs: 1 });
    const deadline = Date.now() + 5000;
    while ((await ledger.get('abandoned'))?.phase === 'running' && Date.now() < deadline) await pause(20);
    expect(await ledger.get('abandoned')).toMatchObject({ phase: 'failed', outcome: { reason: 'lease_expired' }, owned: false });
    await expect(ledger.finish('abandoned', ownerToken, 'completed', null, undefined)).rejects.toMatchObject({ code: 'stale_owner' });
  });

  it('GET /invocations/:id answers a ledger failure as a failure, not as 404; only a missing record is 404', async () => {
    await lockBack(app.get(InvocationLedger));
    const invoked = await http.send('/agents/a/invoke', { method: 'POST', body: { work_ms: 0 } }).result;
    expect(invoked.status).toBe(200);
    await admin.query('ALTER TABLE agent_runtime_invocations RENAME TO agent_runtime_invocations_away');
    try {
      const during = await http.send(`/invocations/${invoked.body.invocation_id}`).result;
      expect(during.status).not.toBe(404);
      expect(during.status).toBeGreaterThanOrEqual(500);
      expect(during.text).not.toContain('agent_runtime_invocations');
    } finally {
      await admin.query('ALTER TABLE agent_runtime_invocations_away RENAME TO agent_runtime_invocations');
    }
    expect((await http.send(`/invocations/${invoked.body.invocation_id}`).result).status).toBe(200);
    expect((await http.send('/invocations/no-such-invocation').result).status).toBe(404);
  });

  it('answers a claim that committed but whose answer was lost with 503 at once, and ends it failed soon after, not after its lease', async () => {
    const ledger = app.get(InvocationLedger);
    await lockBack(ledger);
    const realClaim = ledger.createAndClaim.bind(ledger);
    const spy = jest.spyOn(ledger, 'createAndClaim').mockImplementationOnce(async (...args) => {
      await realClaim(...args);
      throw new LedgerError('transaction_aborted');
    });
    try {
      const answer = await http.send('/agents/lost-answer/invoke', { method: 'POST', body: { work_ms: 0 } }).result;
      expect(answer.status).toBe(503);
    } finally {
      spy.mockRestore();
    }
    // ended in the background right after the answer, long before the claim's 30 s lease
    const endedBy = Date.now() + 5000;
    const lostRows = async () => (await admin.query(`SELECT phase, outcome, owner_token FROM agent_runtime_invocations WHERE workflow_id = 'lost-answer'`)).rows;
    while ((await lostRows())[0]?.phase === 'running' && Date.now() < endedBy) await pause(20);
    expect(await lostRows()).toEqual([{ phase: 'failed', outcome: { reason: 'claim_unanswered' }, owner_token: null }]);
  });

  it('keeps retrying a finish through five failures in a row within its time bound, and records the completion', async () => {
    const ledger = app.get(InvocationLedger);
    await lockBack(ledger);
    const realFinish = ledger.finish.bind(ledger);
    // Only this request's completion fails: an earlier test's background ends of unanswered claims
    // may still be retrying, and must neither take a failure meant for it nor count as its calls.
    const completions: string[] = [];
    const spy = jest.spyOn(ledger, 'finish').mockImplementation(async (id, token, phase, outcome, checkpoint) => {
      if (phase !== 'completed') return realFinish(id, token, phase, outcome, checkpoint);
      completions.push(id);
      if (completions.length <= 5) throw new LedgerError('ledger_unavailable');
      return realFinish(id, token, phase, outcome, checkpoint);
    });
    try {
      const answer = await http.send('/agents/retried-finish/invoke', { method: 'POST', body: { work_ms: 0 } }).result;
      expect(answer.status).toBe(200);
      expect(completions).toEqual(Array(6).fill(answer.body.invocation_id));
    } finally {
      spy.mockRestore();
    }
    const { rows } = await admin.query(`SELECT phase FROM agent_runtime_invocations WHERE workflow_id = 'retried-finish'`);
    expect(rows).toEqual([{ phase: 'completed' }]);
  }, 15_000);
});
