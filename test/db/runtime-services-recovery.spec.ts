import { Controller, Get, HttpCode, Inject, Res, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { AddressInfo } from 'node:net';
import type { DataSource } from 'typeorm';
import { ReadinessService } from '../../src/health/readiness.service';
import { createRuntimeServices } from '../../src/services/bundle/runtime-services-factory';
import { RuntimeServiceSupervisor } from '../../src/services/bundle/runtime-service-supervisor';
import { MemoryOutbox } from '../../src/services/memory-outbox.provider';
import { RuntimeServicesModule } from '../../src/services/runtime-services.module';
import { openDatabaseHarness, useHarness } from '../support/database-harness';
import { eventually } from '../support/eventually';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';

const h = useHarness(() => openDatabaseHarness());
const USER = { appName: 'recovery-app', userId: 'alice' };
const bytes = (text: string) => new Uint8Array(Buffer.from(text, 'utf8'));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The app's health routes: liveness checks nothing external, readiness asks every indicator. */
@Controller('health')
class HealthController {
  constructor(@Inject(ReadinessService) private readonly readiness: ReadinessService) {}

  @Get('live')
  @HttpCode(200)
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  async ready(@Res({ passthrough: true }) response: { status(code: number): unknown }): Promise<unknown> {
    const report = await this.readiness.check();
    response.status(report.status === 'ok' ? 200 : 503);
    return report;
  }
}

interface ServicesApp {
  readonly app: INestApplication;
  get(path: string): Promise<{ status: number; body: any }>;
}

async function startApp(dataSource: DataSource): Promise<ServicesApp> {
  const moduleRef = await Test.createTestingModule({
    imports: [RuntimeServicesModule.forRoot({ profile: 'durable_local', config: { probeIntervalMs: 100, memoryOutbox: { pollIntervalMs: 50, startupTimeoutMs: 1000 } }, dataSource })],
    controllers: [HealthController],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false, forceCloseConnections: true });
  await app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  h().track(() => app.close());
  return {
    app,
    async get(path) {
      const response = await fetch(`${base}${path}`);
      return { status: response.status, body: await response.json() };
    },
  };
}

describe('the bundle heals itself (issue 23 item 2; 00-conventions "Health and shutdown")', () => {
  let proxy: TcpProxy;
  beforeEach(async () => {
    proxy = await startTcpProxy(h().database.url);
  });
  afterEach(async () => {
    await proxy.sever();
  });

  it('a 5 s database outage: readiness down while restarting, liveness up throughout, readiness up again by itself with a new generation that serves', async () => {
    const dataSource = await h().dataSource({}, proxy.url);
    const { app, get } = await startApp(dataSource);
    const ready = await get('/health/ready');
    expect(ready.status).toBe(200);
    // spec 07 §8: {status, profile, generation, durability}, status being up/down only
    expect(ready.body.info.runtime_services).toEqual({ status: 'up', profile: 'durable_local', generation: 1, durability: 'durable' });
    const supervisor = app.get(RuntimeServiceSupervisor);
    expect(await supervisor.services().artifactService.saveArtifact({ ...USER, filename: 'before.txt', artifact: { data: bytes('one'), mimeType: 'text/plain' } })).toBe(1);

    proxy.cut();
    const down = await eventually(async () => {
      const answer = await get('/health/ready');
      return answer.status === 503 ? answer : undefined;
    }, 5000, 'readiness down');
    expect(down.body.error.runtime_services).toMatchObject({ status: 'down', profile: 'durable_local' });
    expect(down.body.error.runtime_services).not.toHaveProperty('state');
    const cutAt = Date.now();
    while (Date.now() - cutAt < 5000) {
      expect((await get('/health/live')).status).toBe(200);
      expect((await get('/health/ready')).status).toBe(503);
      await sleep(250);
    }
    // the outage outlasted the old rule (more than 5 faults in 10 s → failed forever)
    expect(supervisor.state).toBe('restarting');

    proxy.restore();
    const restoredAt = Date.now();
    const back = await eventually(async () => {
      const answer = await get('/health/ready');
      return answer.status === 200 ? answer : undefined;
    }, 15_000, 'readiness up again');
    expect(Date.now() - restoredAt).toBeLessThan(15_000);
    expect(back.body.info.runtime_services.generation).toBeGreaterThan(1);
    expect((await get('/health/live')).status).toBe(200);
    const { artifactService, generation } = supervisor.services();
    expect(generation).toBe(back.body.info.runtime_services.generation);
    expect(Buffer.from((await artifactService.loadArtifact({ ...USER, filename: 'before.txt' }))!.data).toString()).toBe('one');
    expect(await artifactService.saveArtifact({ ...USER, filename: 'before.txt', artifact: { data: bytes('two'), mimeType: 'text/plain' } })).toBe(2);
    // the module's outbox provider follows the new generation
    expect(await app.get(MemoryOutbox).health()).toMatchObject({ status: 'ready', registry: 'hydrated' });
  }, 60_000);

  it('a destroyed DataSource stops the generation with runtime_service_dependency_down; the supervisor keeps trying and never reports failed', async () => {
    const dataSource = await h().dataSource();
    const events: Array<Record<string, unknown>> = [];
    const supervisor = createRuntimeServices('durable_local', { probeIntervalMs: 100 }, { dataSource, events: { emit: (event, payload) => event === 'agent_runtime.services.generation' && events.push(payload as Record<string, unknown>) } });
    h().track(() => supervisor.stop());
    await supervisor.start();
    const old = supervisor.services();
    await dataSource.destroy();
    await eventually(() => events.some((event) => event.event === 'stopped'), 5000, 'generation 1 stopped');
    expect(events.find((event) => event.event === 'stopped')).toEqual({ event: 'stopped', generation: 1, profile: 'durable_local', reason: 'runtime_service_dependency_down' });
    expect(supervisor.status()).toMatchObject({ status: 'restarting', generation: 1 });
    await expect(old.artifactService.listArtifactKeys(USER)).rejects.toMatchObject({ code: 'runtime_service_generation_stale' });
    expect(() => supervisor.services()).toThrow(expect.objectContaining({ code: 'runtime_service_bundle_unavailable' }));
    // attempts at 1 s and 3 s fail at stage schema (the DataSource stays gone); the supervisor is still restarting, not failed
    await eventually(() => supervisor.status().generation === 3, 6000, 'two more attempts');
    expect(supervisor.state).toBe('restarting');
  }, 20_000);
});
