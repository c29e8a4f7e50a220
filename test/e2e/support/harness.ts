import type { DynamicModule, INestApplication, LoggerService, ModuleMetadata, Provider, Type } from '@nestjs/common';
import { EventEmitter2, EventEmitterModule } from '@nestjs/event-emitter';
import { TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AdmissionConfig } from '../../../src/admission/admission-config';
import { AdmissionController } from '../../../src/admission/admission-controller';
import type { AdmissionService } from '../../../src/admission/admission-service';
import { ADMISSION_SERVICE } from '../../../src/admission/admission.constants';
import { AdmissionModule } from '../../../src/admission/admission.module';
import { AdmissionHealthIndicator } from '../../../src/admission/admission.health';
import type { ClusterAdmissionModuleOptions } from '../../../src/admission/admission-service.providers';
import type { AdmissionDecisionEvent, AdmissionOutcome, AdmissionStatus } from '../../../src/admission/admission.types';
import { ClusterAdmissionController } from '../../../src/admission/cluster/cluster-admission-controller';
import { ClusterModule } from '../../../src/cluster/cluster.module';
import { agentRuntimeDataSourceOptions } from '../../../src/database/data-source.factory';
import { TelemetryEvents } from '../../../src/telemetry/telemetry-events';
import { ADMISSION_VARIANTS, type AdmissionVariantName } from '../../support/admission-variants';
import { createFreshDatabase, type FreshDatabase } from '../../support/fresh-database';
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

/**
 * The admission services the admission e2e suites run against, each suite once per variant
 * (`describe.each(ADMISSION_VARIANTS)`): `local` is `AdmissionController`; `cluster` is one
 * `ClusterAdmissionController` instance (spec 08 §3) on a fresh migrated database of its own, through
 * `TypeOrmModule`, `ClusterModule` and `AdmissionModule.forRoot({...config, cluster})`.
 * `ADMISSION_VARIANTS=local` (comma-separated) narrows the list.
 */
export { ADMISSION_VARIANTS, type AdmissionVariantName };

/** Cluster mode of the e2e apps: a short reap period, so a grant missed by NOTIFY is found quickly. */
export const E2E_CLUSTER_OPTIONS: ClusterAdmissionModuleOptions = Object.freeze({ reapIntervalMs: 200 });

/** What `AdmissionModule.forRoot` / `forRootAsync` take besides the limits in `variant`: nothing, or `cluster`. */
export function admissionModeOf(variant: AdmissionVariantName): { cluster?: ClusterAdmissionModuleOptions } {
  return variant === 'cluster' ? { cluster: E2E_CLUSTER_OPTIONS } : {};
}

/** The class of the controller `ADMISSION_SERVICE` holds in `variant`. */
export function admissionControllerClass(variant: AdmissionVariantName): Type<AdmissionService> {
  return variant === 'cluster' ? ClusterAdmissionController : AdmissionController;
}

/** `it` in the local variant; registers nothing in the others (never a skipped test). For tests of process-local behaviour, each saying why. */
export function localOnly(variant: AdmissionVariantName): jest.It {
  return variant === 'local' ? it : (notRegistered as unknown as jest.It);
}

function notRegistered(): void {}

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
  /**
   * `cluster`: the app gets a fresh migrated database (dropped by `dispose`), `TypeOrmModule` and
   * `ClusterModule` on it, and `admission` is given `cluster: E2E_CLUSTER_OPTIONS`; an `admissionModule`
   * of the test must declare `cluster` itself (`admissionModeOf`). @default 'local'
   */
  variant?: AdmissionVariantName;
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
    readonly variant: AdmissionVariantName,
    private readonly database: FreshDatabase | undefined,
  ) {
    this.http = new HttpClient(url);
    events?.on(TelemetryEvents.admissionDecision, (event: AdmissionDecisionEvent) => this.decisions.push(event));
  }

  static async start(options: StartOptions = {}): Promise<TestApp> {
    const variant = options.variant ?? 'local';
    const database = variant === 'cluster' ? await createFreshDatabase() : undefined;
    try {
      return await TestApp.bootstrap(options, variant, database);
    } catch (error) {
      await database?.drop();
      throw error;
    }
  }

  private static async bootstrap(options: StartOptions, variant: AdmissionVariantName, database: FreshDatabase | undefined): Promise<TestApp> {
    const logger = new RecordingLogger();
    const eventEmitter = options.eventEmitter ?? true;
    const cluster = database ? [TypeOrmModule.forRoot(agentRuntimeDataSourceOptions(database.url)), ClusterModule.forRoot()] : [];
    const moduleRef = await Test.createTestingModule({
      imports: [
        ...(eventEmitter ? [EventEmitterModule.forRoot()] : []),
        ...cluster,
        options.admissionModule ?? AdmissionModule.forRoot({ ...(options.admission ?? BASE_CONFIG), ...admissionModeOf(variant) }),
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
    return new TestApp(app, `http://127.0.0.1:${port}`, app.get<AdmissionService>(ADMISSION_SERVICE), app.get(Probe), logger, events, variant, database);
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

  /** Cleanup: lets every handler go, drops every client socket, closes the app, then drops its database. */
  async dispose(): Promise<void> {
    this.probe.finishAll();
    this.http.destroyAll();
    try {
      await this.close();
    } finally {
      await this.database?.drop();
    }
  }
}

/**
 * Registers an `afterEach` that disposes every app started through the returned function, so no
 * app, socket or database outlives its test. Apps start in `variant` unless their options say otherwise.
 */
export function useApps(variant: AdmissionVariantName = 'local'): (options?: StartOptions) => Promise<TestApp> {
  const apps: TestApp[] = [];
  afterEach(async () => {
    const started = apps.splice(0);
    await Promise.all(started.map((app) => app.dispose()));
  });
  return async (options) => {
    const app = await TestApp.start({ variant, ...options });
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
