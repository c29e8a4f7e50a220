import { Controller, Get, Module, type DynamicModule, type INestApplication } from '@nestjs/common';
import { APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import { EventEmitter2, EventEmitterModule } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import type { AdmissionConfig } from '../../../src/admission/admission-config';
import type { AdmissionService } from '../../../src/admission/admission-service';
import { ADMISSION_SERVICE } from '../../../src/admission/admission.constants';
import { AdmissionGuard } from '../../../src/admission/admission.guard';
import { AdmissionModule } from '../../../src/admission/admission.module';
import { MetricsModule } from '../../../src/observability/metrics/metrics.module';
import type { MetricsModuleOptions } from '../../../src/observability/metrics/metrics-module-options';
import { RuntimePolicy } from '../../../src/policy/runtime-policy';
import type { RuntimePolicySpec } from '../../../src/policy/runtime-policy-compiler';
import { RuntimePolicyInterceptor } from '../../../src/policy/runtime-policy.interceptor';
import { RuntimePolicyModule } from '../../../src/policy/runtime-policy.module';
import { InMemorySessionService } from '../../../src/services/sessions/in-memory-session-service';
import { RunRegistry } from '../../../src/runner/runs/run-registry';
import { Runner } from '../../../src/runner/runner';
import { RunsModule } from '../../../src/runner/runs/runs.module';
import { TraceStore } from '../../../src/trace/trace-store';
import { TraceStoreModule } from '../../../src/trace/trace-store.module';
import type { Permit } from '../../../src/admission/permit';
import { parseExposition, type ExpositionSample } from '../../../src/observability/metrics/testing/exposition';

/** The one configured agent of the test app. */
export const AGENT = 'assistant';

/** What the test app is built from. */
export interface MetricsAppOptions {
  readonly metrics?: MetricsModuleOptions;
  readonly admission?: AdmissionConfig;
  readonly policy?: RuntimePolicySpec;
  /** Principal the Runner traces under. @default 'metrics-tests' */
  readonly tracePrincipal?: string;
  /** Bind the admission guard and the policy interceptor globally. @default false */
  readonly globalGuards?: boolean;
}

/** Starts test apps through the returned function and closes every one of them after each test. */
export function useMetricsApps(): (options?: MetricsAppOptions) => Promise<MetricsApp> {
  const apps: MetricsApp[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });
  return async (options = {}) => {
    const app = await MetricsApp.start(options);
    apps.push(app);
    return app;
  };
}

/** The permit of a `submit` result that must have been granted at once. */
export function granted(result: unknown): Permit {
  const submitted = result as { status: string; permit?: Permit };
  if (submitted.status !== 'granted' || !submitted.permit) throw new Error(`expected a grant, got ${submitted.status}`);
  return submitted.permit;
}

/** A route beside `/metrics` that the app's other controllers would have. */
@Controller('ping')
class PingController {
  @Get()
  ping(): { ok: true } {
    return { ok: true };
  }
}

@Module({ controllers: [PingController] })
class PingModule {}

/** The library's modules as an application wires them, with `MetricsModule`, listening on a real socket. */
export class MetricsApp {
  private closing: Promise<void> | undefined;

  private constructor(
    readonly app: INestApplication,
    readonly baseUrl: string,
  ) {}

  static async start(options: MetricsAppOptions = {}): Promise<MetricsApp> {
    const moduleRef = await Test.createTestingModule({ imports: [appModule(options)] }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    const address = app.getHttpServer().address() as { port: number };
    return new MetricsApp(app, `http://127.0.0.1:${address.port}`);
  }

  get admission(): AdmissionService {
    return this.app.get(ADMISSION_SERVICE);
  }
  get policy(): RuntimePolicy {
    return this.app.get(RuntimePolicy);
  }
  get runs(): RunRegistry {
    return this.app.get(RunRegistry);
  }
  get traceStore(): TraceStore {
    return this.app.get(TraceStore);
  }
  get events(): EventEmitter2 {
    return this.app.get(EventEmitter2);
  }

  /** `GET path` on the socket. */
  get(path: string): Promise<Response> {
    return fetch(`${this.baseUrl}${path}`);
  }

  /** The exposition text of `GET /metrics` (status 200 asserted). */
  async scrapeText(path = '/metrics'): Promise<string> {
    const response = await this.get(path);
    if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}`);
    return response.text();
  }

  async scrape(path = '/metrics'): Promise<ExpositionSample[]> {
    return parseExposition(await this.scrapeText(path));
  }

  /** Starts a run and resolves once it finished. */
  async completeRun(request: { userId?: string; sessionId?: string; message?: string } = {}): Promise<string> {
    const { run_id: runId } = await this.runs.start({ agent: AGENT, userId: request.userId ?? 'user-1', message: request.message ?? 'hello', ...(request.sessionId ? { sessionId: request.sessionId } : {}) });
    for (let i = 0; i < 500; i++) {
      const status = await this.runs.get(runId);
      if (status.status !== 'pending' && status.status !== 'running') return status.status;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error('run did not finish');
  }

  /** Closes the app once; later calls get the same promise. */
  close(): Promise<void> {
    this.closing ??= this.app.close();
    return this.closing;
  }
}

function appModule(options: MetricsAppOptions): DynamicModule {
  const principal = options.tracePrincipal ?? 'metrics-tests';
  return {
    module: class MetricsTestAppModule {},
    imports: [
      EventEmitterModule.forRoot(),
      AdmissionModule.forRoot(options.admission ?? { globalLimit: 20_000, agentLimits: { [AGENT]: 1 }, overflow: 'queue', maxQueue: 8 }),
      RuntimePolicyModule.forRoot({ policy: options.policy ?? { agents: { allow: [AGENT] }, tools: { allow: ['search'] } } }),
      TraceStoreModule.forRoot({ resolvePrincipal: () => ({ id: principal }) }),
      RunsModule.forRootAsync({
        inject: [ADMISSION_SERVICE, RuntimePolicy, EventEmitter2, TraceStore],
        useFactory: (admission: AdmissionService, policy: RuntimePolicy, events: EventEmitter2, store: TraceStore) => ({
          runners: [
            new Runner({
              appName: 'metrics-tests',
              agent: { name: AGENT, model: { name: 'fixed', generate: async () => ({ text: 'done' }) } },
              sessionService: new InMemorySessionService(),
              admission: { controller: admission },
              runtimePolicy: policy,
              events,
              traceStore: { store, principal },
            }),
          ],
        }),
      }),
      MetricsModule.forRoot(options.metrics),
      PingModule,
    ],
    providers: options.globalGuards
      ? [
          { provide: APP_GUARD, useClass: AdmissionGuard },
          { provide: APP_INTERCEPTOR, useClass: RuntimePolicyInterceptor },
        ]
      : [],
  };
}
