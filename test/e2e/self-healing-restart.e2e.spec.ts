/**
 * Components restart themselves (issue 23 item 2; conventions, "Health and shutdown"; spec 05 §6.1)
 * through a real Nest app on a real socket and real Postgres: every session of the app's database is
 * terminated, as a Postgres restart would do, once while the database refuses new connections for a
 * few seconds (Postgres stopped) and once while it accepts them at once. Liveness stays 200 throughout; readiness goes down and
 * comes back by itself; the evaluation service runs again as a new generation whose recovery failed
 * the job that was running; the ledger holds its lock again. After `app.close()` nothing restarts.
 */
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { agentRuntimeDataSourceOptions } from '../../src/database/data-source.factory';
import { EvaluationModule } from '../../src/evaluation/evaluation.module';
import { EvalService } from '../../src/evaluation/service/eval-service';
import { InvocationLedger } from '../../src/ledger/invocation-ledger';
import { LedgerModule } from '../../src/ledger/ledger.module';
import { HealthController } from '../../src/reference-app/status.controller';
import type { Agent } from '../../src/runner/agent.types';
import { Runner } from '../../src/runner/runner';
import { RunsModule } from '../../src/runner/runs/runs.module';
import { InMemorySessionService } from '../../src/services/sessions/in-memory-session-service';
import { createFreshDatabase, type FreshDatabase } from '../support/fresh-database';
import { EvaluationClient, expectError } from './support/evaluation-client';
import { RecordingLogger } from './support/harness';
import { HttpClient } from './support/http-client';

/** Its model never answers, so its job stays `running` until the service stops. */
const waitingAgent: Agent = {
  name: 'waiting',
  model: {
    name: 'never-answers',
    generate: (_request, signal) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })),
  },
};
const waitingRequest = { set: { id: 'restart-set', version: '1', cases: [{ case_id: 'c', input: 'hello?', expected_output: 'hi' }] }, agent: 'waiting', metrics: [{ name: 'response_match' }] };

/** Terminates every other session of the database at `url` (the app's pool, the ledger's and the evaluation's lock connections). */
async function terminateSessions(url: string): Promise<number> {
  const client = new Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const { rows } = await client.query('SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    return rows[0].n as number;
  } finally {
    await client.end();
  }
}

/** One statement on the server's maintenance database (`DATABASE_URL`). */
async function serverSql(text: string): Promise<void> {
  const client = new Client({ connectionString: process.env.DATABASE_URL });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** Terminates the sessions of database `name` from the server's maintenance database (when it refuses new ones). */
const terminateSessionsFrom = (name: string) => serverSql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid()`);

/** Polls `GET /health/live` every 50 ms; `stop()` answers the statuses other than 200 (after at least 10 answers). */
function probeLiveness(http: HttpClient): { stop(): Promise<number[]> } {
  const statuses: number[] = [];
  let probing = true;
  const prober = (async () => {
    while (probing) {
      statuses.push((await http.send('/health/live').result).status);
      await sleep(50);
    }
  })();
  return {
    async stop() {
      probing = false;
      await prober;
      expect(statuses.length).toBeGreaterThan(10);
      return statuses.filter((status) => status !== 200);
    },
  };
}

async function until(condition: () => Promise<boolean> | boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe('self-healing: a database blink leaves nothing unready (issue 23 item 2)', () => {
  let fresh: FreshDatabase;
  let app: INestApplication;
  let http: HttpClient;

  beforeAll(async () => {
    fresh = await createFreshDatabase();
    const sessionService = new InMemorySessionService();
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ ...agentRuntimeDataSourceOptions(fresh.url), retryAttempts: 0 }),
        RunsModule.forRoot({ runners: [new Runner({ appName: 'self-healing-e2e', agent: waitingAgent, sessionService })] }),
        EvaluationModule.forRoot({ resolveScope: () => ({ app: 'a' }), service: { preparation: { threads: 1 } } }),
        LedgerModule.forRoot(),
      ],
      controllers: [HealthController],
    })
      .setLogger(new RecordingLogger())
      .compile();
    app = moduleRef.createNestApplication({ logger: new RecordingLogger(), forceCloseConnections: true });
    await app.listen(0, '127.0.0.1');
    http = new HttpClient(`http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`);
  });
  afterAll(async () => {
    http?.destroyAll();
    await app?.close().catch(() => undefined);
    await fresh?.drop();
  });

  test('while the database refuses connections: readiness 503 naming the ledger and evaluation, liveness 200; both back by themselves once it accepts', async () => {
    const name = new URL(fresh.url).pathname.slice(1);
    const live = probeLiveness(http);
    await serverSql(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
    let allowedAt = 0;
    try {
      await terminateSessionsFrom(name);
      await until(async () => {
        const ready = await http.send('/health/ready').result;
        return ready.status === 503 && ready.body.error.invocation_ledger?.status === 'down' && ready.body.error.evaluation?.status === 'down';
      }, 'readiness to name the ledger and evaluation down');
      await sleep(3000);
      expect((await http.send('/health/ready').result).status).toBe(503);
      expect(app.get(InvocationLedger).lockHeld).toBe(false);
    } finally {
      await serverSql(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      allowedAt = Date.now();
    }
    await until(async () => (await http.send('/health/ready').result).status === 200, 'readiness to come back', 20_000);
    expect(Date.now() - allowedAt).toBeLessThan(15_000);
    expect(app.get(EvalService).state).toBe('running');
    expect(await live.stop()).toEqual([]);
  }, 60_000);

  test('liveness 200 throughout; readiness back by itself; the running job failed by the new generation; no restart after close', async () => {
    const client = new EvaluationClient(http);
    expect((await http.send('/health/ready').result).status).toBe(200);
    const jobId = await client.submitted(waitingRequest);
    expect((await client.waitForPhase(jobId, ['running'])).phase).toBe('running');

    const live = probeLiveness(http);

    const service = app.get(EvalService);
    const ledger = app.get(InvocationLedger);
    expect(await terminateSessions(fresh.url)).toBeGreaterThanOrEqual(2);
    await until(() => service.state === 'stopped', 'the evaluation service to stop');
    expect(service.stopReason).toBe('eval_store_ownership_lost');
    const down = await http.send('/health/ready').result;
    expect(down.status).toBe(503);
    expect(down.body.error.evaluation).toMatchObject({ status: 'down', state: 'stopped' });
    const unavailable = await client.status(jobId);
    expectError(unavailable, 503, 'eval_service_unavailable', { reason: 'eval_store_ownership_lost' });

    const stoppedAt = Date.now();
    await until(async () => (await http.send('/health/ready').result).status === 200, 'readiness to come back');
    // the first restart waits 1 s; a few more for the new generation's start on a busy machine
    expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(900);
    expect(Date.now() - stoppedAt).toBeLessThan(12_000);
    expect(service.state).toBe('running');
    expect(service.capabilities().recovered_jobs).toBe(1);
    expect(ledger.lockHeld).toBe(true);
    expect((await client.status(jobId)).body.job).toMatchObject({ phase: 'failed', reason: 'evaluation_service_restarted' });

    expect(await live.stop()).toEqual([]);

    // shutdown ends the supervisor: a stop on a fault during or after close is never followed by a restart
    http.destroyAll();
    await app.close();
    expect(service.state).toBe('stopped');
    await sleep(1500);
    expect(service.state).toBe('stopped');
    await expect(service.restart()).resolves.toBeUndefined();
    expect(service.state).toBe('stopped');
  }, 60_000);
});
