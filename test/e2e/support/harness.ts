import type { DynamicModule, INestApplication, LoggerService, ModuleMetadata, Provider, Type } from '@nestjs/common';
import { EventEmitter2, EventEmitterModule } from '@nestjs/event-emitter';
import { TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AdmissionConfig } from '../../../src/admission/admission-config';
import type { AdmissionService } from '../../../src/admission/admission-service';
import { ADMISSION_SERVICE } from '../../../src/admission/admission.constants';
import { AdmissionModule } from '../../../src/admission/admission.module';
import { AdmissionHealthIndicator } from '../../../src/admission/admission.health';
import type { AdmissionDecisionEvent, AdmissionOutcome, AdmissionStatus } from '../../../src/admission/admission.types';
import { TelemetryEvents } from '../../../src/telemetry/telemetry-events';
import { HttpClient } from './http-client';
import { Probe } from './probe';
import {
  AgentInvokeController,
  BrokenResolverController,
  FixedInvalidAgentController,
  DenyAfterAdmissionGuard,
  SlowBeforeAdmissionGuard,
  HealthController,
  LayeredController,
  OpenController,
  WorkController,
} from './routes';

/**
 * Limits of the e2e apps: agent `solo` and `fifo` take one request at a time, every other agent
 * two; the global limit is out of the way.
 */
export const BASE_CONFIG: AdmissionConfig = Object.freeze({
  globalLimit: 16,
  defaultAgentLimit: 2,
  agentLimits: { solo: 1, fifo: 1 },
  overflow: 'reject',
  maxQueue: 16,
  defaultQueueTimeoutMs: 20_000,
  drainTimeoutMs: 2_000,
});

export const ALL_CONTROLLERS: Type[] = [
  WorkController,
  LayeredController,
  OpenController,
  BrokenResolverController,
  FixedInvalidAgentController,
  AgentInvokeController,
  HealthController,
];

export interface LogEntry {
  readonly level: 'log' | 'error' | 'warn' | 'debug' | 'verbose' | 'fatal';
  readonly text: string;
}

/** A quiet Nest logger that keeps what it is told. */
export class RecordingLogger implements LoggerService {
  readonly entries: LogEntry[] = [];
  log(...args: unknown[]): void {
    this.push('log', args);
  }
  error(...args: unknown[]): void {
    this.push('error', args);
  }
  warn(...args: unknown[]): void {
    this.push('warn', args);
  }
  debug(...args: unknown[]): void {
    this.push('debug', args);
  }
  verbose(...args: unknown[]): void {
    this.push('verbose', args);
  }
  fatal(...args: unknown[]): void {
    this.push('fatal', args);
  }
  ofLevel(level: LogEntry['level']): string[] {
    return this.entries.filter((entry) => entry.level === level).map((entry) => entry.text);
  }
  private push(level: LogEntry['level'], args: unknown[]): void {
    const text = args.map((arg) => (arg instanceof Error ? `${arg.name}: ${arg.message}\n${arg.stack}` : typeof arg === 'string' ? arg : safeJson(arg))).join(' ');
    this.entries.push({ level, text });
  }
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

export interface StartOptions {
  /** `AdmissionModule.forRoot(config)`; ignored when `admissionModule` is given. @default BASE_CONFIG */
  admission?: AdmissionConfig;
  /** Use this module instead of `forRoot` (e.g. `forRootAsync`). */
  admissionModule?: DynamicModule;
  /** Import `EventEmitterModule.forRoot()`. @default true */
  eventEmitter?: boolean;
  /** @default every test controller */
  controllers?: Type[];
  providers?: Provider[];
  imports?: ModuleMetadata['imports'];
  /** The express adapter destroys open connections on close. @default false */
  forceCloseConnections?: boolean;
  /** Call `app.enableShutdownHooks()`. @default false */
  shutdownHooks?: boolean;
}

/** A Nest app listening on 127.0.0.1 with a real socket. */
export class TestApp {
  readonly decisions: AdmissionDecisionEvent[] = [];
  readonly http: HttpClient;
  private closing: Promise<void> | undefined;

  private constructor(
    readonly app: INestApplication,
    readonly url: string,
    readonly admission: AdmissionService,
    readonly probe: Probe,
    readonly logger: RecordingLogger,
    events: EventEmitter2 | undefined,
  ) {
    this.http = new HttpClient(url);
    events?.on(TelemetryEvents.admissionDecision, (event: AdmissionDecisionEvent) => this.decisions.push(event));
  }

  static async start(options: StartOptions = {}): Promise<TestApp> {
    const logger = new RecordingLogger();
    const eventEmitter = options.eventEmitter ?? true;
    const moduleRef = await Test.createTestingModule({
      imports: [
        ...(eventEmitter ? [EventEmitterModule.forRoot()] : []),
        options.admissionModule ?? AdmissionModule.forRoot(options.admission ?? BASE_CONFIG),
        TerminusModule,
        ...(options.imports ?? []),
      ],
      controllers: options.controllers ?? ALL_CONTROLLERS,
      providers: [Probe, AdmissionHealthIndicator, DenyAfterAdmissionGuard, SlowBeforeAdmissionGuard, ...(options.providers ?? [])],
    })
      .setLogger(logger)
      .compile();
    const app = moduleRef.createNestApplication({ logger, forceCloseConnections: options.forceCloseConnections ?? false });
    if (options.shutdownHooks) app.enableShutdownHooks();
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as AddressInfo;
    const events = eventEmitter ? app.get(EventEmitter2) : undefined;
    return new TestApp(app, `http://127.0.0.1:${port}`, app.get<AdmissionService>(ADMISSION_SERVICE), app.get(Probe), logger, events);
  }

  status(): AdmissionStatus {
    return this.admission.status();
  }

  /** Active permits of one agent (0 when it has no work). */
  activeOf(agent: string): number {
    return this.status().per_agent[agent]?.active ?? 0;
  }

  /** Queued requests of one agent (0 when it has no work). */
  queuedOf(agent: string): number {
    return this.status().per_agent[agent]?.queued ?? 0;
  }

  outcomes(agent?: string): AdmissionOutcome[] {
    return this.decisions.filter((event) => agent === undefined || event.agent_id === agent).map((event) => event.outcome);
  }

  count(outcome: AdmissionOutcome, agent?: string): number {
    return this.outcomes(agent).filter((each) => each === outcome).length;
  }

  /** Closes the app once; later calls return the same promise. */
  close(): Promise<void> {
    this.closing ??= this.app.close();
    return this.closing;
  }

  /** Cleanup: lets every handler go, drops every client socket, closes the app. */
  async dispose(): Promise<void> {
    this.probe.finishAll();
    this.http.destroyAll();
    await this.close();
  }
}

/**
 * Registers an `afterEach` that disposes every app started through the returned function, so no
 * app or socket outlives its test.
 */
export function useApps(): (options?: StartOptions) => Promise<TestApp> {
  const apps: TestApp[] = [];
  afterEach(async () => {
    const started = apps.splice(0);
    await Promise.all(started.map((app) => app.dispose()));
  });
  return async (options) => {
    const app = await TestApp.start(options);
    apps.push(app);
    return app;
  };
}

/** Polls `condition` every few ms until it is truthy; fails after `timeoutMs`. */
export async function waitFor<T>(condition: () => T, what: string, timeoutMs = 5_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = condition();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(5);
  }
}

/** Gives the event loop time to do something it must not do (used only for negative checks). */
export function settleTime(ms = 100): Promise<void> {
  return sleep(ms);
}
