/**
 * Readiness and the written shutdown order (conventions, "Health and shutdown") through a real Nest
 * app on a real socket and real Postgres: readiness names every configured component up and down,
 * and still during `app.close()`; the shutdown runs its phases in the written order whatever the
 * import order, and a step that hangs is logged and bounded.
 */
import { Controller, Get, Inject, Injectable, type DynamicModule, type INestApplication, type OnModuleInit, type Provider } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { AddressInfo } from 'node:net';
import { DataSource } from 'typeorm';
import { AdmissionController } from '../../src/admission/admission-controller';
import { Admission } from '../../src/admission/admission.decorator';
import { AdmissionModule } from '../../src/admission/admission.module';
import { agentRuntimeDataSourceOptions } from '../../src/database/data-source.factory';
import { DatabaseHealthIndicator } from '../../src/database/database.health';
import { AgentRuntimeHealthModule } from '../../src/health/agent-runtime-health.module';
import { ShutdownCoordinator } from '../../src/health/shutdown-coordinator';
import { InvocationLedger } from '../../src/ledger/invocation-ledger';
import { LedgerModule } from '../../src/ledger/ledger.module';
import { HealthController } from '../../src/reference-app/status.controller';
import { serverSql, useLedgerHarness } from '../support/ledger-harness';
import { RecordingLogger } from './support/harness';
import { HttpClient } from './support/http-client';

/** Handlers that hold their admission permit until the test lets them go. */
@Injectable()
class Gate {
  readonly held: string[] = [];
  private readonly waiting = new Map<string, () => void>();
  hold(key: string): Promise<void> {
    this.held.push(key);
    return new Promise((resolve) => this.waiting.set(key, resolve));
  }
  release(key: string): void {
    this.waiting.get(key)?.();
  }
}

@Controller('work')
class WorkController {
  constructor(@Inject(Gate) private readonly gate: Gate) {}

  @Get('hold')
  @Admission('worker')
  async hold(): Promise<{ done: true }> {
    await this.gate.hold('hold');
    return { done: true };
  }
}

/** Records the shutdown's events and registers a `runs` step, as the run registry will. */
@Injectable()
class EventLog implements OnModuleInit {
  readonly events: string[] = [];
  constructor(@Inject(ShutdownCoordinator) private readonly coordinator: ShutdownCoordinator) {}
  onModuleInit(): void {
    this.coordinator.register({ component: 'runs_probe', phase: 'runs', run: () => void this.events.push('runs') });
  }
}

interface Started {
  app: INestApplication;
  http: HttpClient;
  logger: RecordingLogger;
  close(): Promise<void>;
}

async function start(url: string, imports: Array<DynamicModule | typeof AgentRuntimeHealthModule>, providers: Provider[] = []): Promise<Started> {
  const logger = new RecordingLogger();
  const moduleRef = await Test.createTestingModule({
    imports,
    controllers: [HealthController, WorkController],
    providers: [Gate, EventLog, DatabaseHealthIndicator, ...providers],
  })
    .setLogger(logger)
    .compile();
  const app = moduleRef.createNestApplication({ logger, forceCloseConnections: true });
  await app.listen(0, '127.0.0.1');
  const http = new HttpClient(`http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`);
  let closing: Promise<void> | undefined;
  return { app, http, logger, close: () => (closing ??= app.close()) };
}

async function waitFor(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const typeOrm = (url: string) => TypeOrmModule.forRoot({ ...agentRuntimeDataSourceOptions(url), retryAttempts: 0, extra: { application_name: 'health-app' } });

describe('readiness over HTTP', () => {
  const h = useLedgerHarness();
  let app: Started | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('names every configured component without the app listing their indicators, 200 when all are up', async () => {
    app = await start(h().database.url, [AdmissionModule.forRoot({ globalLimit: 4 }), typeOrm(h().database.url), LedgerModule.forRoot()]);
    const ready = await app.http.get('/health/ready').result;
    expect(ready.status).toBe(200);
    const up = {
      admission: { status: 'up', draining: false, active: 0, queued: 0, available: 4 },
      database: { status: 'up' },
      invocation_ledger: { status: 'up', lock_held: true },
    };
    expect(ready.body).toEqual({ status: 'ok', info: up, error: {}, details: up });
    expect(Object.keys(ready.body.details)).toEqual(['admission', 'database', 'invocation_ledger']);
  });

  it('answers 503 naming the failing components, never error text, when the database stops answering', async () => {
    app = await start(h().database.url, [AdmissionModule.forRoot({ globalLimit: 4 }), typeOrm(h().database.url), LedgerModule.forRoot()]);
    const [{ db }] = await h().sql<{ db: string }>('SELECT current_database() AS db');
    await serverSql(`ALTER DATABASE ${db} ALLOW_CONNECTIONS false`);
    try {
      await h().sql(`SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'health-app'`);
      let ready = await app.http.get('/health/ready').result;
      await waitFor(async () => {
        ready = await app!.http.get('/health/ready').result;
        return ready.body.error?.database !== undefined && ready.body.error?.invocation_ledger !== undefined;
      }, 'readiness to see the outage');
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({
        status: 'error',
        info: { admission: { status: 'up', draining: false, active: 0, queued: 0, available: 4 } },
        error: { database: { status: 'down' }, invocation_ledger: { status: 'down', lock_held: false } },
        details: {
          admission: { status: 'up', draining: false, active: 0, queued: 0, available: 4 },
          database: { status: 'down' },
          invocation_ledger: { status: 'down', lock_held: false },
        },
      });
      expect(ready.text).not.toMatch(/message|terminat|connection|ECONN|at .*\.[jt]s/i);
    } finally {
      await serverSql(`ALTER DATABASE ${db} ALLOW_CONNECTIONS true`);
    }
  });

  it('still names every component during app.close(): admission draining is down, the others keep their state', async () => {
    app = await start(h().database.url, [AdmissionModule.forRoot({ globalLimit: 4 }), typeOrm(h().database.url), LedgerModule.forRoot()]);
    const gate = app.app.get(Gate);
    const held = app.http.get('/work/hold');
    await waitFor(() => gate.held.includes('hold'), 'the handler to hold its permit');

    const closing = app.close();
    await waitFor(() => app!.app.get(AdmissionController).status().draining, 'the drain to begin');
    const ready = await app.http.get('/health/ready').result;
    expect(ready.status).toBe(503);
    expect(ready.body).toEqual({
      status: 'error',
      info: { database: { status: 'up' }, invocation_ledger: { status: 'up', lock_held: true } },
      error: {
        admission: { status: 'down', draining: true, active: 1, queued: 0, available: 3 },
        shutdown: { status: 'down', phase: 'admission_drain' },
      },
      details: {
        admission: { status: 'down', draining: true, active: 1, queued: 0, available: 3 },
        database: { status: 'up' },
        invocation_ledger: { status: 'up', lock_held: true },
        shutdown: { status: 'down', phase: 'admission_drain' },
      },
    });

    gate.release('hold');
    expect((await held.result).status).toBe(200);
    await closing;
  });
});

describe('the written shutdown order', () => {
  const h = useLedgerHarness();

  it.each([
    ['LedgerModule imported before TypeOrmModule', (url: string) => [LedgerModule.forRoot(), typeOrm(url), AdmissionModule.forRoot()]],
    ['LedgerModule imported after TypeOrmModule', (url: string) => [AdmissionModule.forRoot(), typeOrm(url), LedgerModule.forRoot()]],
  ])('begin drain, runs, admission drain, ledger, DataSource: %s', async (_name, imports) => {
    const started = await start(h().database.url, imports(h().database.url));
    const { events } = started.app.get(EventLog);
    const admission = started.app.get(AdmissionController);
    const ledger = started.app.get(InvocationLedger);
    const dataSource = started.app.get(DataSource);
    const record = <T extends object, K extends keyof T>(target: T, method: K, name: string) => {
      const original = (target[method] as (...args: unknown[]) => unknown).bind(target);
      jest.spyOn(target, method as never).mockImplementation(((...args: unknown[]) => {
        events.push(`${name}:start`);
        const result = original(...args);
        if (result instanceof Promise) return result.finally(() => events.push(`${name}:end`));
        events.push(`${name}:end`);
        return result;
      }) as never);
    };
    record(admission, 'beginDrain', 'begin_drain');
    record(admission, 'drain', 'admission_drain');
    record(ledger, 'close', 'ledger_close');
    record(dataSource, 'destroy', 'data_source_destroy');

    await started.close();
    // drain() calls beginDrain() again: idempotent, and inside the admission_drain step
    expect(events).toEqual([
      'begin_drain:start',
      'begin_drain:end',
      'runs',
      'admission_drain:start',
      'begin_drain:start',
      'begin_drain:end',
      'admission_drain:end',
      'ledger_close:start',
      'ledger_close:end',
      'data_source_destroy:start',
      'data_source_destroy:end',
    ]);
    expect(ledger.status()).toEqual({ state: 'closed', lock_held: false });
    expect(started.logger.ofLevel('warn')).toEqual([]);
  });

  it('a step that hangs is logged with its counts and the next step runs within the bound', async () => {
    @Injectable()
    class StuckRunner implements OnModuleInit {
      constructor(@Inject(ShutdownCoordinator) private readonly coordinator: ShutdownCoordinator) {}
      onModuleInit(): void {
        this.coordinator.register({ component: 'stuck_runner', phase: 'runs', run: () => new Promise<void>(() => {}), counts: () => ({ runs: 2 }) });
      }
    }
    const started = await start(
      h().database.url,
      [AgentRuntimeHealthModule.forRoot({ shutdownTimeoutMs: 1500, minimumStepMs: 300 }), LedgerModule.forRoot(), typeOrm(h().database.url), AdmissionModule.forRoot()],
      [StuckRunner],
    );
    const ledger = started.app.get(InvocationLedger);
    const startedAt = Date.now();
    await started.close();
    const elapsed = Date.now() - startedAt;

    // 1500 ms in all, 300 ms kept for each of the two later steps (admission drain, ledger)
    expect(elapsed).toBeGreaterThanOrEqual(850);
    expect(elapsed).toBeLessThan(5000);
    const warnings = started.logger.ofLevel('warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('shutdown step runs of "stuck_runner" did not finish within');
    expect(warnings[0]).toContain('(runs 2)');
    expect(warnings[0]).toContain('the next step runs');
    expect(started.app.get(EventLog).events).toEqual(['runs']);
    expect(ledger.status()).toEqual({ state: 'closed', lock_held: false });
    await waitFor(async () => (await h().advisoryLocks()).length === 0, 'the instance lock to be released');
  });
});
