import type { DynamicModule, INestApplication, ModuleMetadata, Provider, Type } from '@nestjs/common';
import { EventEmitter2, EventEmitterModule } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import type { AddressInfo } from 'node:net';
import type { AuditSink } from '../../../src/policy/audit-log/audit-sink';
import type { PolicyDecision } from '../../../src/policy/policy-decision';
import { RuntimePolicyModule } from '../../../src/policy/runtime-policy.module';
import type { RuntimePolicyModuleOptions } from '../../../src/policy/runtime-policy.constants';
import type { RuntimePolicySpec } from '../../../src/policy/runtime-policy-compiler';
import { TelemetryEvents } from '../../../src/telemetry/telemetry-events';
import { RecordingLogger } from './harness';
import { HttpClient, type HttpResult } from './http-client';
import { PolicyProbe, PolicyRoutesController } from './policy-routes';

/** Secret placed in request bodies; it must never reach a response, a log line, an audit record or an event. */
export const BODY_CANARY = 'CANARY-body-secret-4d1e8b';
/** Secret placed in handler results that are denied; it must never reach the client. */
export const RESULT_CANARY = 'CANARY-result-secret-93c0a2';

/**
 * The policy of the e2e apps: agents `helper`, `writer` allowed, `rogue` denied, everything else in
 * no list; tools `search`, `calc` allowed, `shell` denied; 128 bytes of tool arguments and content.
 */
export const E2E_POLICY: RuntimePolicySpec = Object.freeze({
  id: 'e2e-policy',
  agents: { allow: ['helper', 'writer', 'rogue'], deny: ['rogue'] },
  tools: { allow: ['search', 'calc', 'shell'], deny: ['shell'] },
  maxArgumentBytes: 128,
  maxContentBytes: 128,
});
export const ARG_LIMIT = 128;
export const CONTENT_LIMIT = 128;

/** `decision-` + a lowercase UUIDv7. */
export const DECISION_ID = /^decision-[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** One step of a sink's life, in the order things happened. */
export interface SinkStep {
  readonly step: 'start' | 'done' | 'failed';
  readonly decision_id: string;
  readonly operation: string;
}

/**
 * Test double of an `AuditSink`: keeps every decision it is given (and when), and can be told to
 * reject, hang or wait for the test (`gate`) on the n-th call.
 */
export class RecordingSink implements AuditSink {
  /** Every decision passed to `record`, in call order (also the failed ones). */
  readonly decisions: PolicyDecision[] = [];
  readonly steps: SinkStep[] = [];
  /** What the n-th call (0-based) does; calls without an entry succeed at once. */
  readonly behaviour = new Map<number, 'reject' | 'throw' | 'hang' | 'gate'>();
  /** What every call without an entry in `behaviour` does. */
  fallback: 'ok' | 'reject' | 'hang' = 'ok';
  /** Error text of a rejecting sink: it must never reach a client or a log. */
  static readonly ERROR_CANARY = 'CANARY-sink-error-1b7c55 password=hunter2';
  private readonly gates: Array<() => void> = [];
  private readonly timeline: string[] | undefined;

  constructor(timeline?: string[]) {
    this.timeline = timeline;
  }

  record(decision: PolicyDecision): Promise<void> {
    const index = this.decisions.length;
    this.decisions.push(decision);
    this.step('start', decision);
    const behaviour = this.behaviour.get(index) ?? this.fallback;
    if (behaviour === 'throw') {
      this.step('failed', decision);
      // a synchronous throw, not a rejected promise
      throw new Error(RecordingSink.ERROR_CANARY);
    }
    if (behaviour === 'reject') {
      this.step('failed', decision);
      return Promise.reject(new Error(RecordingSink.ERROR_CANARY));
    }
    if (behaviour === 'hang') return new Promise<void>(() => undefined);
    if (behaviour === 'gate') {
      return new Promise<void>((resolve) => {
        this.gates.push(() => {
          this.step('done', decision);
          resolve();
        });
      });
    }
    this.step('done', decision);
    return Promise.resolve();
  }

  /** Number of gated calls still waiting. */
  pending(): number {
    return this.gates.length;
  }

  /** Lets the oldest gated call finish. */
  release(): void {
    const next = this.gates.shift();
    if (!next) throw new Error('no gated record call is waiting');
    next();
  }

  releaseAll(): void {
    while (this.gates.length > 0) this.release();
  }

  private step(step: SinkStep['step'], decision: PolicyDecision): void {
    this.steps.push({ step, decision_id: decision.decision_id, operation: decision.operation });
    this.timeline?.push(`sink:${step}:${decision.operation}`);
  }
}

export interface PolicyAppOptions {
  /** `RuntimePolicyModule.forRoot(moduleOptions)`; ignored when `policyModule` is given. @default {policy: E2E_POLICY} */
  moduleOptions?: Partial<RuntimePolicyModuleOptions> & Record<string, unknown>;
  /** A ready module (e.g. `forRootAsync`) instead of `forRoot`. */
  policyModule?: DynamicModule;
  /** Import `EventEmitterModule.forRoot()`. @default true */
  eventEmitter?: boolean;
  /** @default [PolicyRoutesController] */
  controllers?: Type[];
  providers?: Provider[];
  imports?: ModuleMetadata['imports'];
}

/** A telemetry event as the app emitted it. */
export interface SeenEvent {
  readonly name: string;
  readonly payload: Record<string, unknown>;
}

/** A Nest app with the runtime policy, listening on 127.0.0.1 with a real socket. */
export class PolicyApp {
  readonly http: HttpClient;
  /** Policy and admission events, in emission order. */
  readonly events: SeenEvent[] = [];
  private closing: Promise<void> | undefined;

  constructor(
    readonly app: INestApplication,
    readonly url: string,
    readonly logger: RecordingLogger,
    readonly probe: PolicyProbe,
    emitter: EventEmitter2 | undefined,
  ) {
    this.http = new HttpClient(url);
    for (const name of [TelemetryEvents.policyDecision, TelemetryEvents.admissionDecision]) {
      emitter?.on(name, (payload: Record<string, unknown>) => {
        this.events.push({ name, payload });
        probe.timeline.push(`event:${name === TelemetryEvents.policyDecision ? 'policy' : 'admission'}:${String(payload.outcome)}`);
      });
    }
  }

  /** Policy decision payloads, in emission order. */
  policyEvents(): Array<Record<string, unknown>> {
    return this.events.filter((event) => event.name === TelemetryEvents.policyDecision).map((event) => event.payload);
  }

  post(path: string, body?: unknown, headers?: Record<string, string>): Promise<HttpResult> {
    return this.http.send(path, { method: 'POST', body, headers }).result;
  }

  get(path: string): Promise<HttpResult> {
    return this.http.get(path).result;
  }

  /** Every log line written so far, joined (for canary searches). */
  logText(): string {
    return this.logger.entries.map((entry) => entry.text).join('\n');
  }

  close(): Promise<void> {
    this.closing ??= this.app.close();
    return this.closing;
  }

  async dispose(): Promise<void> {
    this.http.destroyAll();
    await this.close();
  }
}

/**
 * Builds and starts the app. A start-up failure is rethrown after whatever was created is closed, so
 * a failed bootstrap leaks no connection; the logger is attached to the error as `logger`.
 */
export async function startPolicyApp(options: PolicyAppOptions = {}): Promise<PolicyApp> {
  const logger = new RecordingLogger();
  const eventEmitter = options.eventEmitter ?? true;
  const policyModule = options.policyModule ?? RuntimePolicyModule.forRoot({ policy: E2E_POLICY, ...options.moduleOptions } as RuntimePolicyModuleOptions);
  let app: INestApplication | undefined;
  try {
    const moduleRef = await Test.createTestingModule({
      imports: [...(eventEmitter ? [EventEmitterModule.forRoot()] : []), ...(options.imports ?? []), policyModule],
      controllers: options.controllers ?? [PolicyRoutesController],
      providers: [PolicyProbe, ...(options.providers ?? [])],
    })
      .setLogger(logger)
      .compile();
    app = moduleRef.createNestApplication({ logger });
    await app.listen(0, '127.0.0.1');
  } catch (error) {
    await app?.close().catch(() => undefined);
    throw error;
  }
  const { port } = app.getHttpServer().address() as AddressInfo;
  return new PolicyApp(app, `http://127.0.0.1:${port}`, logger, app.get(PolicyProbe), eventEmitter ? app.get(EventEmitter2) : undefined);
}

/** Registers an `afterEach` disposing every app started through the returned function. */
export function usePolicyApps(): (options?: PolicyAppOptions) => Promise<PolicyApp> {
  const apps: PolicyApp[] = [];
  afterEach(async () => {
    const started = apps.splice(0);
    await Promise.all(started.map((app) => app.dispose()));
  });
  return async (options) => {
    const app = await startPolicyApp(options);
    apps.push(app);
    return app;
  };
}

/** The error a start-up rejected with (fails the test when start-up succeeds). */
export async function startupError(options: PolicyAppOptions): Promise<any> {
  let app: PolicyApp | undefined;
  try {
    app = await startPolicyApp(options);
  } catch (error) {
    return error;
  }
  await app.dispose();
  throw new Error('expected start-up to fail, but the app started');
}

/** Asserts that `secret` appears nowhere in the response (status line aside), its headers or the logs. */
export function expectNowhere(secret: string, result: HttpResult, app: PolicyApp): void {
  expect(result.text).not.toContain(secret);
  expect(JSON.stringify(result.headers)).not.toContain(secret);
  expect(app.logText()).not.toContain(secret);
}

/** `{q: 'x…'}` whose canonical JSON is exactly `bytes` long (`{"q":""}` is 8 bytes). */
export function argsOfSize(bytes: number, extra = ''): { q: string } {
  if (bytes < 8 + extra.length) throw new Error(`cannot build ${bytes} bytes of arguments`);
  return { q: extra + 'x'.repeat(bytes - 8 - extra.length) };
}
