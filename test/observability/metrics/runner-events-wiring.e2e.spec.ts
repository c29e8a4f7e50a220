import { Module, type DynamicModule, type INestApplication } from '@nestjs/common';
import { EventEmitter2, EventEmitterModule } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import { MetricsModule } from '../../../src/observability/metrics/metrics.module';
import { parseExposition, seriesOf } from '../../../src/observability/metrics/testing/exposition';
import { Runner } from '../../../src/runner/runner';
import type { RunnerOptions } from '../../../src/runner/runner.types';
import { RunsModule } from '../../../src/runner/runs/runs.module';
import { InMemorySessionService } from '../../../src/services/sessions/in-memory-session-service';
import { TelemetryEvents } from '../../../src/telemetry/telemetry-events';
import type { TelemetrySink } from '../../../src/telemetry/telemetry-sink';

const AGENT = 'assistant';
const INVOCATIONS = 'agent_runtime_runner_invocations_total';

/** A Runner as the docs build it: no `events`, no telemetry option of any kind. */
const plainRunner = (extra: Partial<RunnerOptions> = {}) =>
  new Runner({ appName: 'wiring-tests', agent: { name: AGENT, model: { name: 'fixed', generate: async () => ({ text: 'done' }) } }, sessionService: new InMemorySessionService(), ...extra });

/** An app with `EventEmitterModule`, `RunsModule` over `runner` and `MetricsModule`, on a real socket. */
class WiredApp {
  readonly invocationEvents: object[] = [];

  private constructor(
    readonly app: INestApplication,
    private readonly baseUrl: string,
  ) {
    app.get(EventEmitter2).on(TelemetryEvents.runnerInvocation, (payload: object) => this.invocationEvents.push(payload));
  }

  static async start(runner: Runner, registryEvents?: TelemetrySink): Promise<WiredApp> {
    const moduleRef = await Test.createTestingModule({ imports: [appModule(runner, registryEvents)] }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    return new WiredApp(app, `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`);
  }

  /** `POST /runs`, then `GET /runs/:id` until the run finished; its final status. */
  async runOnce(): Promise<string> {
    const started = await fetch(`${this.baseUrl}/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ agent: AGENT, message: 'hello' }) });
    expect(started.status).toBe(202);
    const { run_id: runId } = (await started.json()) as { run_id: string };
    for (let attempt = 0; attempt < 500; attempt++) {
      const { status } = (await (await fetch(`${this.baseUrl}/runs/${runId}`)).json()) as { status: string };
      if (status !== 'pending' && status !== 'running') return status;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error('run did not finish');
  }

  /** The `agent_runtime_runner_invocations_total` series of `GET /metrics`. */
  async invocationSeries(): Promise<Record<string, number>> {
    const response = await fetch(`${this.baseUrl}/metrics`);
    expect(response.status).toBe(200);
    return seriesOf(parseExposition(await response.text()), INVOCATIONS);
  }

  close(): Promise<void> {
    return this.app.close();
  }
}

function appModule(runner: Runner, registryEvents: TelemetrySink | undefined): DynamicModule {
  @Module({})
  class WiringTestAppModule {}
  return {
    module: WiringTestAppModule,
    imports: [EventEmitterModule.forRoot(), RunsModule.forRootAsync({ useFactory: () => ({ runners: [runner], resolvePrincipal: () => ({ id: 'user-1' }), ...(registryEvents ? { registry: { events: registryEvents } } : {}) }) }), MetricsModule.forRoot()],
  };
}

const apps: WiredApp[] = [];
async function start(runner: Runner, registryEvents?: TelemetrySink): Promise<WiredApp> {
  const app = await WiredApp.start(runner, registryEvents);
  apps.push(app);
  return app;
}
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

describe('a Runner built without events, in an app with EventEmitterModule and MetricsModule', () => {
  it('shows its run on GET /metrics after one run over HTTP', async () => {
    const app = await start(plainRunner());
    expect(await app.invocationSeries()).toEqual({});
    expect(await app.runOnce()).toBe('completed');
    expect(await app.invocationSeries()).toEqual({ 'agent_id=assistant,outcome=completed,status=completed': 1 });
    expect(app.invocationEvents).toEqual([expect.objectContaining({ agent_id: AGENT, outcome: 'completed', model_calls: 1 })]);
  });

  it('reports each run to the app that ran it: two apps in one process sharing one Runner see only their own', async () => {
    const shared = plainRunner();
    const [first, second] = [await start(shared), await start(shared)];
    expect(await first.runOnce()).toBe('completed');
    expect(await first.invocationSeries()).toEqual({ 'agent_id=assistant,outcome=completed,status=completed': 1 });
    expect(await second.invocationSeries()).toEqual({});
    expect(second.invocationEvents).toEqual([]);

    expect(await second.runOnce()).toBe('completed');
    expect(await second.runOnce()).toBe('completed');
    expect(await first.invocationSeries()).toEqual({ 'agent_id=assistant,outcome=completed,status=completed': 1 });
    expect(await second.invocationSeries()).toEqual({ 'agent_id=assistant,outcome=completed,status=completed': 2 });
    expect([first.invocationEvents.length, second.invocationEvents.length]).toEqual([1, 2]);
  });

  it("keeps a Runner's explicit events: its runs go there, not to the app's emitter", async () => {
    const received: string[] = [];
    const own: TelemetrySink = { emit: (event) => void received.push(event) };
    const app = await start(plainRunner({ events: own }));
    expect(await app.runOnce()).toBe('completed');
    expect(received).toEqual([TelemetryEvents.runnerInvocation]);
    expect(app.invocationEvents).toEqual([]);
    expect(await app.invocationSeries()).toEqual({});
  });

  it("keeps the module's explicit registry.events: runs of Runners without events go there", async () => {
    const received: string[] = [];
    const app = await start(plainRunner(), { emit: (event) => void received.push(event) });
    expect(await app.runOnce()).toBe('completed');
    expect(received).toEqual([TelemetryEvents.runnerInvocation]);
    expect(app.invocationEvents).toEqual([]);
  });
});
