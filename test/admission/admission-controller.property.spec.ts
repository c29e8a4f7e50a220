/**
 * Property-based tests of the admission controller (spec 01 §11), with fast-check.
 *
 * Each run builds a controller with a random small configuration (3–4 agents, per-agent limits 1–3,
 * globalLimit 1–5, maxQueue 0–6) on a {@link ManualClock}, then plays a random sequence of commands:
 * submit/acquire (with or without owner and requester signals, pre-aborted or shared ones, mixed
 * overflow, deadlines in the past / future / 'infinity', queueTimeoutMs), release (once, twice, through
 * `Symbol.dispose`, or of a look-alike object), cancel (once, twice, unknown ref), owner abort,
 * requester-signal abort, clock advance (fires the expiry timer), status() and, rarely, beginDrain().
 *
 * The test keeps its own model of every request, built only from what a caller can observe: what
 * submit returned or threw, how the acquire/await promise settled, `permit.signal` aborts, telemetry.
 * After EVERY command (and a macrotask turn, so promise settlements are delivered) and INSIDE the
 * telemetry sink and the permit-signal abort listeners, it checks the invariants of §11:
 *   1. per-agent active ≤ limit, active ≤ globalLimit, queue_length ≤ maxQueue;
 *   2. every submit ends in exactly one terminal outcome (thrown / one queued failure / grant followed
 *      by at most one revocation, exactly one after everything is released at the end);
 *   3. active == grants − revocations counted from telemetry; permit.signal aborts exactly once per
 *      revocation; release/cancel return true at most once per permit/request;
 *   4. grants of one agent follow its enqueue order;
 *   5. after every operation either no queued request is eligible or active == globalLimit;
 *   6. status() and telemetry payloads are plain JSON-safe records without refs or permit ids;
 * plus the submit decision of §5.1 (computed from the model), reasons of queued failures (§4, §6),
 * prompt expiry by the single timer (§5.3), drain order (§5.9), listener bookkeeping on shared
 * signals (§10) and the absence of unhandled promise rejections (§9).
 *
 * It runs against both admission services: the local controller, checked synchronously after each
 * call as before, and a single cluster instance, whose checks of a command wait until the instance
 * has no decision in flight (its `submit` is a promise and its grants follow a transaction).
 */
import fc from 'fast-check';
import { AdmissionError } from '../../src/admission/admission.errors';
import type { AdmissionConfig } from '../../src/admission/admission-config';
import type { AdmissionRequestOptions } from '../../src/admission/admission-request';
import type { AdmissionService } from '../../src/admission/admission-service';
import type { AdmissionDecisionEvent, AdmissionStatus, SubmitResult } from '../../src/admission/admission.types';
import type { Permit } from '../../src/admission/permit';
import { ManualClock } from '../../src/shared/time/manual-clock';
import { ADMISSION_VARIANTS, admissionSuite, type AdmissionFixture, type AdmissionSuite } from '../support/admission-controller-fixture';

// ---- generated scenario -------------------------------------------------------------------------

/** `'__proto__'` is an ordinary agent id (spec §2); it takes part when 4 agents are in play. */
const AGENT_POOL = ['a', 'b', 'c', '__proto__'] as const;
const DECISION_EVENT = 'agent_runtime.admission.decision';

interface Scenario {
  agentCount: number;
  globalLimit: number;
  defaultAgentLimit: number;
  /** `[agent index, limit]`; later pairs win on duplicate agents. */
  agentLimits: Array<[number, number]>;
  overflow: 'reject' | 'queue';
  maxQueue: number;
  defaultQueueTimeoutMs: number | 'infinity';
  /** The telemetry sink and permit-signal listeners call `status()` (a re-entrant operation). */
  statusInListeners: boolean;
}

/** Owner / requester signal of a request: none, a fresh one, a fresh already-aborted one, or one reused from the pool. */
type LifetimeSpec = 'none' | 'new' | 'newAborted' | { reuse: number };
type SignalSpec = LifetimeSpec | 'sameAsOwner';
type DeadlineSpec = 'infinity' | number | { halves: number };
/** An action run from inside the `permit.signal` abort listener (re-entrancy, §9). */
interface NestedAction {
  t: 'release' | 'cancel';
  req: number;
}

type Cmd =
  | {
      t: 'submit';
      agent: number;
      mode: 'submit' | 'acquire';
      owner: LifetimeSpec;
      signal: SignalSpec;
      overflow?: 'reject' | 'queue';
      /** `{halves}` = now + halves / 2 (negative: in the past); a number is `Infinity`. */
      deadline?: DeadlineSpec;
      queueTimeoutMs?: number | 'infinity';
      onRevoke?: NestedAction;
    }
  | { t: 'release'; req: number; how: 'once' | 'twice' | 'dispose' | 'lookalike' }
  | { t: 'cancel'; req: number; how: 'once' | 'twice' | 'unknown' }
  | { t: 'abortOwner'; which: number }
  | { t: 'abortSignal'; which: number }
  | { t: 'advance'; halves: number }
  | { t: 'status' }
  | { t: 'beginDrain' };

const timeoutArb = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 60 }) },
  { weight: 1, arbitrary: fc.constant('infinity' as const) },
  { weight: 1, arbitrary: fc.constant(Infinity) },
);

function scenarioArb({ reentrant: statusInListeners, queueHeavy }: Profile): fc.Arbitrary<Scenario> {
  return fc.record({
    agentCount: fc.integer({ min: 3, max: 4 }),
    globalLimit: fc.integer({ min: 1, max: queueHeavy ? 3 : 5 }),
    defaultAgentLimit: fc.integer({ min: 1, max: queueHeavy ? 2 : 3 }),
    agentLimits: fc.array(fc.tuple(fc.nat(3), fc.integer({ min: 1, max: 3 })), { maxLength: 3 }),
    overflow: queueHeavy ? fc.constant('queue' as const) : fc.constantFrom('reject' as const, 'queue' as const),
    maxQueue: queueHeavy ? fc.integer({ min: 2, max: 6 }) : fc.integer({ min: 0, max: 6 }),
    defaultQueueTimeoutMs: queueHeavy ? fc.constant('infinity' as const) : timeoutArb,
    statusInListeners: fc.constant(statusInListeners),
  });
}

const lifetimeArb: fc.Arbitrary<LifetimeSpec> = fc.oneof(
  { weight: 8, arbitrary: fc.constant('none' as const) },
  { weight: 6, arbitrary: fc.constant('new' as const) },
  { weight: 1, arbitrary: fc.constant('newAborted' as const) },
  { weight: 4, arbitrary: fc.record({ reuse: fc.nat(7) }) },
);
const signalArb: fc.Arbitrary<SignalSpec> = fc.oneof(
  { weight: 6, arbitrary: lifetimeArb },
  { weight: 1, arbitrary: fc.constant('sameAsOwner' as const) },
);
const deadlineArb: fc.Arbitrary<DeadlineSpec> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ halves: fc.integer({ min: -20, max: 120 }) }) },
  { weight: 1, arbitrary: fc.constant('infinity' as const) },
  { weight: 1, arbitrary: fc.constant(Infinity) },
);
const reqIndexArb = fc.nat(40);

interface Profile {
  /** Permit-signal listeners release or cancel other requests, and listeners call `status()`. */
  reentrant: boolean;
  /** Overflow 'queue' by default and long deadlines, so the queue fills and dispatch does the granting. */
  queueHeavy: boolean;
}

function commandsArb({ reentrant, queueHeavy }: Profile, maxLength: number): fc.Arbitrary<Cmd[]> {
  const submitModel = {
    t: fc.constant('submit' as const),
    agent: fc.nat(3),
    mode: fc.constantFrom('submit' as const, 'acquire' as const),
    owner: lifetimeArb,
    signal: signalArb,
    overflow: queueHeavy
      ? fc.oneof({ weight: 5, arbitrary: fc.constant('queue' as const) }, { weight: 1, arbitrary: fc.constant('reject' as const) })
      : fc.constantFrom('reject' as const, 'queue' as const),
    deadline: queueHeavy ? fc.oneof({ weight: 3, arbitrary: fc.constant('infinity' as const) }, { weight: 2, arbitrary: deadlineArb }) : deadlineArb,
    queueTimeoutMs: timeoutArb,
  };
  const required = ['t', 'agent', 'mode', 'owner', 'signal'] as const;
  const submit: fc.Arbitrary<Cmd> = reentrant
    ? fc.record(
        { ...submitModel, onRevoke: fc.record({ t: fc.constantFrom('release' as const, 'cancel' as const), req: reqIndexArb }) },
        { requiredKeys: [...required, 'onRevoke'] },
      )
    : fc.record(submitModel, { requiredKeys: [...required] });
  const release = fc.record({
    t: fc.constant('release' as const),
    req: reqIndexArb,
    how: fc.constantFrom('once' as const, 'twice' as const, 'dispose' as const, 'lookalike' as const),
  });
  const cancel = fc.record({
    t: fc.constant('cancel' as const),
    req: reqIndexArb,
    how: fc.constantFrom('once' as const, 'twice' as const, 'unknown' as const),
  });
  const cmd: fc.Arbitrary<Cmd> = fc.oneof(
    { weight: 6, arbitrary: submit },
    { weight: queueHeavy ? 4 : 2, arbitrary: release },
    { weight: 2, arbitrary: cancel },
    { weight: 1, arbitrary: fc.record({ t: fc.constant('abortOwner' as const), which: fc.nat(7) }) },
    { weight: 1, arbitrary: fc.record({ t: fc.constant('abortSignal' as const), which: fc.nat(7) }) },
    { weight: 3, arbitrary: fc.record({ t: fc.constant('advance' as const), halves: fc.integer({ min: 0, max: 80 }) }) },
    {
      weight: 1,
      arbitrary: fc.oneof(
        { weight: 7, arbitrary: fc.constant({ t: 'status' as const }) },
        { weight: 1, arbitrary: fc.constant({ t: 'beginDrain' as const }) },
      ),
    },
  );
  return fc.array(cmd, { maxLength, size: 'max' });
}

// ---- the model ----------------------------------------------------------------------------------

/** An AbortController of the test whose signal counts the `abort` listeners the controller keeps on it. */
interface Lifetime {
  index: number;
  controller: AbortController;
  usedAsOwner: boolean;
  usedAsSignal: boolean;
  listeners: Set<unknown>;
}

type Decision = 'granted' | 'queued' | 'refused' | 'drain_refused';

interface Expected {
  decision: Decision;
  /** Telemetry outcome of the submit decision (none for `drain_refused`). */
  outcome?: AdmissionDecisionEvent['outcome'];
  /** The error: an AdmissionError code, or the identical object (a signal's reason). */
  code?: string;
  reason?: unknown;
  details?: Record<string, unknown>;
}

interface Req {
  id: number;
  agent: string;
  mode: 'submit' | 'acquire';
  owner?: Lifetime;
  signal?: Lifetime;
  /** Effective absolute deadline (`Infinity` for none). */
  deadline: number;
  expected: Expected;
  /** Enqueue order across the run (only for `queued` decisions). */
  seq: number;
  ref?: string;
  permit?: Permit;
  /** Outcomes delivered to the caller: a permit or an error (exactly one by the end). */
  settled: number;
  error?: unknown;
  /** `permit.signal` aborts seen (already aborted on delivery counts as one). */
  revoked: number;
  revokeOutcome?: string;
  releaseTrue: number;
  cancelTrue: number;
  onRevoke?: NestedAction;
}

type State = 'queued' | 'granting' | 'active' | 'done';

function stateOf(req: Req): State {
  if (req.expected.decision === 'queued' && req.settled === 0) return 'queued';
  if (req.expected.decision === 'granted' && req.permit === undefined) return 'granting';
  if (req.permit !== undefined && req.revoked === 0) return 'active';
  return 'done';
}

/** How an event moved the totals: `(Δactive, Δqueued)`. */
type EventClass = 'grantSubmit' | 'grantQueue' | 'enqueue' | 'refuse' | 'leaveQueue' | 'revoke';

const ALLOWED: Record<AdmissionDecisionEvent['outcome'], EventClass[]> = {
  granted: ['grantSubmit', 'grantQueue'],
  queued: ['enqueue'],
  rejected: ['refuse'],
  rate_limited: ['refuse'],
  queue_full: ['refuse'],
  expired: ['refuse', 'leaveQueue'],
  cancelled: ['leaveQueue', 'revoke'],
  released: ['revoke'],
  owner_down: ['refuse', 'leaveQueue', 'revoke'],
  requester_down: ['refuse', 'leaveQueue'],
  deployment_draining: ['leaveQueue'],
};

function classify(dActive: number, dQueued: number): EventClass | undefined {
  if (dActive === 1 && dQueued === 0) return 'grantSubmit';
  if (dActive === 1 && dQueued === -1) return 'grantQueue';
  if (dActive === 0 && dQueued === 1) return 'enqueue';
  if (dActive === 0 && dQueued === 0) return 'refuse';
  if (dActive === 0 && dQueued === -1) return 'leaveQueue';
  if (dActive === -1 && dQueued === 0) return 'revoke';
  return undefined;
}

interface Recorded {
  payload: AdmissionDecisionEvent;
  cls: EventClass | undefined;
}

interface AgentCounts {
  grants: number;
  revocations: number;
  enqueued: number;
  dequeued: number;
  refusals: number;
}

const REF_PATTERN = /^request-[A-Za-z0-9_-]{24}$/;
const PERMIT_PATTERN = /^permit-[A-Za-z0-9_-]{24}$/;

/** Why a value is not a frozen, plain, JSON-safe record (numbers, booleans, strings, null, plain objects), or undefined. */
function recordViolation(value: unknown, path: string): string | undefined {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : `${path} is not a finite number`;
  if (typeof value !== 'object') return `${path} is a ${typeof value}`;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return `${path} is not a plain object`;
  if (!Object.isFrozen(value)) return `${path} is not frozen`;
  for (const key of Reflect.ownKeys(value)) {
    if (typeof key !== 'string') return `${path} has a symbol key`;
    const descriptor = Object.getOwnPropertyDescriptor(value, key) as PropertyDescriptor;
    if (!('value' in descriptor)) return `${path}.${key} is an accessor`;
    const inner = recordViolation(descriptor.value, `${path}.${key}`);
    if (inner !== undefined) return inner;
  }
  return undefined;
}

function leaksHandles(value: unknown): boolean {
  const json = JSON.stringify(value);
  return json.includes('request-') || json.includes('permit-');
}

const isCode = (error: unknown, code: string): boolean => error instanceof AdmissionError && error.code === code;
const describe_ = (error: unknown): string =>
  error instanceof AdmissionError ? `AdmissionError(${error.code})` : error instanceof Error ? `${error.name}(${error.message})` : String(error);
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

// ---- unhandled rejections (§9) ------------------------------------------------------------------

/**
 * Jest hands the test a copy of `process` that never receives `unhandledRejection`; the real one is
 * reached through a function of the outer realm (Jest's `setTimeout` is Node's own).
 */
function hostProcess(): NodeJS.Process {
  try {
    const host = (setTimeout.constructor as FunctionConstructor)('return typeof process === "object" ? process : undefined')() as NodeJS.Process | undefined;
    if (host && typeof host.on === 'function') return host;
  } catch {
    // fall back to the sandbox's process
  }
  return process;
}

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => {
  unhandled.push(reason);
};
beforeAll(() => {
  hostProcess().on('unhandledRejection', onUnhandled);
});
afterAll(() => {
  hostProcess().off('unhandledRejection', onUnhandled);
});

// ---- one run ------------------------------------------------------------------------------------

class Run {
  readonly agents: string[];
  readonly limits = new Map<string, number>();
  readonly clock = new ManualClock(1000);
  private fixture!: AdmissionFixture;
  readonly requests: Req[] = [];
  readonly lifetimes: Lifetime[] = [];
  readonly events: Recorded[] = [];
  readonly counts = new Map<string, AgentCounts>();
  readonly violations: string[] = [];
  private totals = { active: 0, queued: 0 };
  /** Per-agent active counts right after each grant from the queue, in telemetry order. */
  private readonly queueGrantSnapshots: Array<{ agent: string; active: Map<string, number> }> = [];
  private queueGrantsDelivered = 0;
  private enqueueSeq = 0;
  private draining = false;
  private drainStartedAt: number | null = null;
  /** Nested actions run by permit-signal listeners during the current command. */
  private nestedRuns = 0;
  private step = 'construction';

  constructor(
    readonly scenario: Scenario,
    private readonly suite: AdmissionSuite,
  ) {
    this.agents = AGENT_POOL.slice(0, scenario.agentCount);
    const agentLimits = Object.fromEntries(scenario.agentLimits.map(([i, limit]) => [this.agents[i % this.agents.length], limit]));
    for (const agent of this.agents) {
      const own = Object.prototype.hasOwnProperty.call(agentLimits, agent);
      this.limits.set(agent, own ? (agentLimits[agent] as number) : scenario.defaultAgentLimit);
      this.counts.set(agent, { grants: 0, revocations: 0, enqueued: 0, dequeued: 0, refusals: 0 });
    }
    this.config = {
      globalLimit: scenario.globalLimit,
      defaultAgentLimit: scenario.defaultAgentLimit,
      agentLimits,
      overflow: scenario.overflow,
      maxQueue: scenario.maxQueue,
      defaultQueueTimeoutMs: scenario.defaultQueueTimeoutMs,
    };
  }

  private readonly config: AdmissionConfig;

  /** Builds and starts the controller of the suite's variant. */
  async start(): Promise<void> {
    this.fixture = await this.suite.setup(this.config, this.clock, { emit: (name: string, payload: object) => this.onTelemetry(name, payload) });
  }

  /** Stops the controller (the cluster variant frees its database for the next run). */
  close(): Promise<void> {
    return this.fixture.close();
  }

  get controller(): AdmissionService {
    return this.fixture.controller;
  }

  /** Whether every effect of a call has happened when it returns (the local controller). */
  private get synchronous(): boolean {
    return this.suite.variant.synchronous;
  }

  /**
   * Nothing for the local controller, whose checks run right after each call; for the cluster
   * controller, the wait until the decisions the call started have been applied.
   */
  private effectsOfCall(): Promise<void> | undefined {
    return this.synchronous ? undefined : this.fixture.settle();
  }

  fail(message: string): void {
    this.violations.push(`[${this.step}] ${message}`);
  }

  private check(condition: boolean, message: () => string): void {
    if (!condition) this.fail(message());
  }

  private throwIfViolated(): void {
    if (this.violations.length > 0) throw new Error(`Invariant violations:\n${this.violations.slice(0, 8).join('\n')}`);
  }

  // -- telemetry sink (runs synchronously while the controller flushes its effects) --

  private onTelemetry(name: string, raw: object): void {
    try {
      this.check(name === DECISION_EVENT, () => `unexpected event name ${name}`);
      const payload = raw as AdmissionDecisionEvent;
      const shape = recordViolation(payload, 'payload');
      this.check(shape === undefined, () => `telemetry ${shape}`);
      const keys = Object.keys(payload).sort().join(',');
      this.check(keys === 'active,agent_id,outcome,queued,wait_ms', () => `telemetry keys ${keys}`);
      this.check(!leaksHandles(payload), () => `telemetry payload carries a ref or permit id: ${JSON.stringify(payload)}`);
      this.check(Number.isInteger(payload.wait_ms) && payload.wait_ms >= 0, () => `wait_ms ${payload.wait_ms} not a whole non-negative number`);
      this.check(payload.wait_ms <= this.clock.monotonicNow() - 1000, () => `wait_ms ${payload.wait_ms} longer than the run`);
      const counts = this.counts.get(payload.agent_id);
      this.check(counts !== undefined, () => `telemetry for unknown agent ${JSON.stringify(payload.agent_id)}`);
      // invariant 1, at the instant of the transition
      this.check(payload.active <= this.scenario.globalLimit, () => `payload active ${payload.active} > globalLimit ${this.scenario.globalLimit}`);
      this.check(payload.queued <= this.scenario.maxQueue, () => `payload queued ${payload.queued} > maxQueue ${this.scenario.maxQueue}`);
      // invariant 3: the totals move by exactly one transition of the kind the outcome allows
      const cls = classify(payload.active - this.totals.active, payload.queued - this.totals.queued);
      this.check(
        cls !== undefined && (ALLOWED[payload.outcome] ?? []).includes(cls),
        () =>
          `event ${payload.outcome} moved totals from ${JSON.stringify(this.totals)} to ` +
          `{active:${payload.active},queued:${payload.queued}}, which is no transition of that outcome`,
      );
      this.totals = { active: payload.active, queued: payload.queued };
      if (counts && cls) {
        if (cls === 'grantSubmit' || cls === 'grantQueue') counts.grants++;
        if (cls === 'revoke') counts.revocations++;
        if (cls === 'enqueue') counts.enqueued++;
        if (cls === 'grantQueue' || cls === 'leaveQueue') counts.dequeued++;
        if (cls === 'refuse') counts.refusals++;
        const limit = this.limits.get(payload.agent_id) as number;
        this.check(counts.grants - counts.revocations <= limit, () => `agent ${payload.agent_id} holds ${counts.grants - counts.revocations} permits (limit ${limit}) by telemetry`);
        if (cls === 'grantQueue') {
          const active = new Map<string, number>();
          for (const [agent, c] of this.counts) active.set(agent, c.grants - c.revocations);
          this.queueGrantSnapshots.push({ agent: payload.agent_id, active });
        }
      }
      this.events.push({ payload, cls });
      if (this.scenario.statusInListeners) this.checkStatus(this.controller.status(), 'inside the telemetry sink', this.synchronous);
    } catch (error) {
      this.fail(`telemetry listener threw ${describe_(error)}`);
    }
  }

  // -- status checks (invariants 1, 5, 6) --

  /**
   * Checks that need no model: usable inside listeners too. `settled` is false inside a listener of
   * the cluster controller, whose release or abort returns (and tells its listeners) before the
   * decision that grants the next request: there only the limits and sums are checked, not §11.5.
   */
  private checkStatus(status: AdmissionStatus, where: string, settled = true): void {
    const shape = recordViolation(status, 'status');
    this.check(shape === undefined, () => `${where}: ${shape}`);
    this.check(!leaksHandles(status), () => `${where}: status carries a ref or permit id`);
    this.check(Object.getPrototypeOf(status.per_agent) === null, () => `${where}: per_agent has a prototype`);
    this.check(status.global_limit === this.scenario.globalLimit, () => `${where}: global_limit ${status.global_limit}`);
    this.check(status.max_queue === this.scenario.maxQueue, () => `${where}: max_queue ${status.max_queue}`);
    this.check(status.overflow === this.scenario.overflow, () => `${where}: overflow ${status.overflow}`);
    this.check(status.available === Math.max(0, status.global_limit - status.active), () => `${where}: available ${status.available}`);
    this.check(status.draining === this.draining, () => `${where}: draining ${status.draining}, expected ${this.draining}`);
    this.check(status.drain_started_at === this.drainStartedAt, () => `${where}: drain_started_at ${status.drain_started_at}`);
    this.check(status.active <= status.global_limit, () => `${where}: active ${status.active} > global_limit ${status.global_limit}`);
    this.check(status.queue_length <= status.max_queue, () => `${where}: queue_length ${status.queue_length} > max_queue ${status.max_queue}`);
    let active = 0;
    let queued = 0;
    for (const agent of Object.keys(status.per_agent)) {
      const entry = status.per_agent[agent];
      this.check(this.limits.has(agent), () => `${where}: per_agent lists unknown agent ${JSON.stringify(agent)}`);
      this.check(entry.limit === this.limits.get(agent), () => `${where}: limit of ${agent} is ${entry.limit}, expected ${this.limits.get(agent)}`);
      this.check(entry.active > 0 || entry.queued > 0, () => `${where}: per_agent lists idle agent ${agent}`);
      this.check(entry.active <= entry.limit, () => `${where}: agent ${agent} active ${entry.active} > limit ${entry.limit}`);
      // invariant 5
      this.check(
        !settled || !(entry.queued > 0 && entry.active < entry.limit) || status.active === status.global_limit,
        () =>
          `${where}: agent ${agent} has ${entry.queued} queued and spare capacity (${entry.active}/${entry.limit}) ` +
          `while active ${status.active} < global_limit ${status.global_limit}`,
      );
      active += entry.active;
      queued += entry.queued;
    }
    this.check(active === status.active, () => `${where}: per_agent active sums to ${active}, status.active ${status.active}`);
    this.check(queued === status.queue_length, () => `${where}: per_agent queued sums to ${queued}, queue_length ${status.queue_length}`);
  }

  private modelCounts(agent?: string): { active: number; queued: number } {
    let active = 0;
    let queued = 0;
    for (const req of this.requests) {
      if (agent !== undefined && req.agent !== agent) continue;
      const state = stateOf(req);
      if (state === 'active' || state === 'granting') active++;
      if (state === 'queued') queued++;
    }
    return { active, queued };
  }

  /** All checks, after a command and a macrotask turn (so every settlement has been delivered). */
  private checkAfterCommand(): void {
    const now = this.clock.monotonicNow();
    // the model, from what callers observed
    for (const req of this.requests) {
      const state = stateOf(req);
      const label = `request #${req.id} (${req.agent})`;
      this.check(state !== 'granting', () => `${label} was granted at submit but its permit was never delivered`);
      this.check(req.settled <= 1, () => `${label} settled ${req.settled} times`);
      this.check(req.revoked <= 1, () => `${label}: permit.signal aborted ${req.revoked} times`);
      this.check(req.releaseTrue <= 1 && req.cancelTrue <= 1 && req.releaseTrue + req.cancelTrue <= 1, () => `${label}: release true ${req.releaseTrue}×, cancel true ${req.cancelTrue}×`);
      if (state === 'queued') {
        this.check(req.deadline > now, () => `${label} still queued at ${now} past its deadline ${req.deadline} (expiry timer did not settle it)`);
        this.check(!req.owner?.controller.signal.aborted, () => `${label} still queued although its owner aborted`);
        this.check(!req.signal?.controller.signal.aborted, () => `${label} still queued although its signal aborted`);
        this.check(!this.draining, () => `${label} still queued while draining`);
      }
      if (state === 'active') this.check(!req.owner?.controller.signal.aborted, () => `${label} still holds its permit although its owner aborted`);
    }
    // telemetry against the model (invariants 2 and 3)
    let delivered = 0;
    let revokedSignals = 0;
    for (const req of this.requests) {
      if (req.permit) delivered++;
      revokedSignals += req.revoked;
    }
    let grants = 0;
    let revocations = 0;
    for (const agent of this.agents) {
      const c = this.counts.get(agent) as AgentCounts;
      const model = this.modelCounts(agent);
      grants += c.grants;
      revocations += c.revocations;
      this.check(c.grants - c.revocations === model.active, () => `agent ${agent}: telemetry grants ${c.grants} − revocations ${c.revocations} ≠ ${model.active} permits held`);
      this.check(c.enqueued - c.dequeued === model.queued, () => `agent ${agent}: telemetry queued ${c.enqueued} − left ${c.dequeued} ≠ ${model.queued} requests waiting`);
    }
    this.check(grants === delivered, () => `telemetry counts ${grants} grants, callers received ${delivered} permits`);
    this.check(revocations === revokedSignals, () => `telemetry counts ${revocations} revocations, permit signals aborted ${revokedSignals} times`);
    // the controller's own view
    const status = this.controller.status();
    this.checkStatus(status, 'status() after the command');
    const model = this.modelCounts();
    this.check(status.active === model.active, () => `status.active ${status.active}, callers hold ${model.active} permits`);
    this.check(status.queue_length === model.queued, () => `status.queue_length ${status.queue_length}, ${model.queued} requests wait`);
    for (const agent of this.agents) {
      const m = this.modelCounts(agent);
      const entry = Object.prototype.hasOwnProperty.call(status.per_agent, agent) ? status.per_agent[agent] : undefined;
      this.check((entry?.active ?? 0) === m.active && (entry?.queued ?? 0) === m.queued, () => `per_agent[${agent}] ${JSON.stringify(entry)}, model ${JSON.stringify(m)}`);
    }
    this.check(this.totals.active === status.active && this.totals.queued === status.queue_length, () => `last telemetry totals ${JSON.stringify(this.totals)} differ from status`);
    // §10: a signal holds no more controller listeners than its live entries need
    for (const lifetime of this.lifetimes) {
      if (lifetime.controller.signal.aborted) continue;
      let bound = 0;
      for (const req of this.requests) {
        const state = stateOf(req);
        if (state === 'queued' && (req.owner === lifetime || req.signal === lifetime)) bound++;
        if (state === 'active' && req.owner === lifetime) bound++;
      }
      this.check(lifetime.listeners.size <= bound, () => `signal #${lifetime.index} holds ${lifetime.listeners.size} abort listeners for ${bound} live entries`);
    }
    // §5.3: one controller timer
    this.check(this.fixture.timers() <= 1, () => `${this.fixture.timers()} timers pending`);
    this.check(unhandled.length === 0, () => `unhandled rejection: ${describe_(unhandled[0])}`);
  }

  // -- lifetimes --

  private newLifetime(aborted: boolean): Lifetime {
    const controller = new AbortController();
    const listeners = new Set<unknown>();
    const signal = controller.signal;
    const add = signal.addEventListener;
    const remove = signal.removeEventListener;
    signal.addEventListener = function (this: AbortSignal, type: string, listener: unknown, options?: unknown) {
      if (type === 'abort' && listener) listeners.add(listener);
      return Reflect.apply(add, this, [type, listener, options]);
    } as typeof signal.addEventListener;
    signal.removeEventListener = function (this: AbortSignal, type: string, listener: unknown, options?: unknown) {
      if (type === 'abort') listeners.delete(listener);
      return Reflect.apply(remove, this, [type, listener, options]);
    } as typeof signal.removeEventListener;
    const lifetime: Lifetime = { index: this.lifetimes.length, controller, usedAsOwner: false, usedAsSignal: false, listeners };
    this.lifetimes.push(lifetime);
    if (aborted) controller.abort(new Error(`reason of signal #${lifetime.index}`));
    return lifetime;
  }

  private lifetimeFor(spec: LifetimeSpec): Lifetime | undefined {
    if (spec === 'none') return undefined;
    if (spec === 'new' || spec === 'newAborted') return this.newLifetime(spec === 'newAborted');
    // reuse a live signal (pre-aborted ones come from 'newAborted', and aborted signals stay in use anyway)
    const live = this.lifetimes.filter((l) => !l.controller.signal.aborted);
    if (live.length === 0) return this.newLifetime(false);
    return live[spec.reuse % live.length];
  }

  // -- settlement handlers --

  private onPermit(req: Req, permit: Permit): void {
    const label = `request #${req.id} (${req.agent})`;
    req.settled++;
    this.check(req.settled === 1, () => `${label} received a second outcome (a permit)`);
    this.check(req.expected.decision === 'granted' || req.expected.decision === 'queued', () => `${label} (${req.expected.decision}) received a permit`);
    this.check(Object.isFrozen(permit), () => `${label}: permit not frozen`);
    this.check(permit.agentId === req.agent, () => `${label}: permit for agent ${permit.agentId}`);
    this.check(PERMIT_PATTERN.test(permit.id), () => `${label}: permit id format`);
    this.check(REF_PATTERN.test(permit.requestRef), () => `${label}: request ref format`);
    this.check(req.ref === undefined || req.ref === permit.requestRef, () => `${label}: permit of another request`);
    for (const other of this.requests) {
      this.check(other === req || other.permit === undefined || other.permit.id !== permit.id, () => `${label}: permit id reused`);
    }
    if (req.expected.decision === 'queued') {
      // Settlements and telemetry are performed in the order the controller made them (§9), so a request
      // enqueued before this one that has not settled yet was still waiting when this one was granted, and
      // this is the grant of the next 'granted' event that took a request out of the queue.
      const snapshot = this.queueGrantSnapshots[this.queueGrantsDelivered++];
      this.check(snapshot?.agent === req.agent, () => `${label}: permit delivered out of step with the queue grants in telemetry`);
      for (const older of this.requests) {
        if (older.expected.decision !== 'queued' || older.seq >= req.seq || older.settled !== 0) continue;
        // an older request whose owner or signal aborted in this very command is on its way out; whether
        // dispatch may still pick it before its listener runs is left open here
        if (older.owner?.controller.signal.aborted || older.signal?.controller.signal.aborted) continue;
        if (older.agent === req.agent) {
          // invariant 4
          this.fail(`grant out of enqueue order: ${label} (queued #${req.seq}) was granted while request #${older.id} (queued #${older.seq}) of the same agent still waits`);
        } else if (snapshot !== undefined && (snapshot.active.get(older.agent) as number) < (this.limits.get(older.agent) as number)) {
          // invariant 5 at the instant of the grant (§5.2: the oldest eligible request goes first)
          this.fail(
            `${label} (queued #${req.seq}) was granted while the older request #${older.id} (queued #${older.seq}) of agent ` +
              `${older.agent} waited with spare agent capacity (${snapshot.active.get(older.agent)}/${this.limits.get(older.agent)})`,
          );
        }
      }
    }
    req.ref = permit.requestRef;
    req.permit = permit;
    const signal = permit.signal;
    if (signal.aborted) this.onRevoked(req, signal.reason);
    else signal.addEventListener('abort', () => this.onRevoked(req, signal.reason));
  }

  private onRevoked(req: Req, reason: unknown): void {
    try {
      req.revoked++;
      this.check(req.revoked === 1, () => `request #${req.id}: permit.signal aborted twice`);
      const outcome = reason instanceof AdmissionError ? reason.details?.outcome : undefined;
      this.check(
        isCode(reason, 'permit_revoked') && (outcome === 'released' || outcome === 'cancelled' || outcome === 'owner_down'),
        () => `request #${req.id}: permit.signal reason ${describe_(reason)} outcome ${String(outcome)}`,
      );
      req.revokeOutcome = String(outcome);
      if (this.scenario.statusInListeners) this.checkStatus(this.controller.status(), 'inside a permit.signal abort listener', this.synchronous);
      if (req.onRevoke) this.runNested(req.onRevoke);
    } catch (error) {
      this.fail(`permit.signal listener threw ${describe_(error)}`);
    }
  }

  private runNested(action: NestedAction): void {
    this.nestedRuns++;
    if (action.t === 'release') {
      const holders = this.requests.filter((r) => r.permit !== undefined);
      if (holders.length === 0) return;
      const target = holders[action.req % holders.length];
      if (this.controller.release(target.permit as Permit)) target.releaseTrue++;
    } else {
      const known = this.requests.filter((r) => r.ref !== undefined);
      if (known.length === 0) return;
      const target = known[action.req % known.length];
      if (this.controller.cancel(target.ref as string)) target.cancelTrue++;
    }
  }

  private onError(req: Req, error: unknown): void {
    const label = `request #${req.id} (${req.agent}, ${req.expected.decision})`;
    req.settled++;
    req.error = error;
    this.check(req.settled === 1, () => `${label} received a second outcome (${describe_(error)})`);
    if (req.expected.decision === 'queued') {
      // a queued failure must match something that happened to the request (§4, §5.3, §5.6, §5.9)
      const signal = req.signal?.controller.signal;
      const owner = req.owner?.controller.signal;
      let explained = false;
      if (signal?.aborted && error === signal.reason) explained = true;
      else if (isCode(error, 'queue_deadline_exceeded')) explained = req.deadline <= this.clock.monotonicNow();
      else if (isCode(error, 'cancelled')) explained = req.cancelTrue === 1;
      else if (isCode(error, 'owner_down')) explained = owner?.aborted === true && !signal?.aborted;
      else if (isCode(error, 'deployment_draining')) explained = this.draining;
      this.check(explained, () => `${label} failed with ${describe_(error)}, which nothing explains`);
    } else {
      this.checkRefusal(req, error, label);
    }
  }

  private checkRefusal(req: Req, error: unknown, label: string): void {
    const expected = req.expected;
    if (expected.decision === 'granted' || expected.decision === 'queued') {
      this.fail(`${label} was refused with ${describe_(error)}`);
      return;
    }
    if (expected.reason !== undefined) {
      this.check(error === expected.reason, () => `${label}: expected the signal's reason, got ${describe_(error)}`);
      return;
    }
    this.check(isCode(error, expected.code as string), () => `${label}: expected ${expected.code}, got ${describe_(error)}`);
    if (expected.details && error instanceof AdmissionError) {
      for (const [key, value] of Object.entries(expected.details)) {
        this.check(error.details?.[key] === value, () => `${label}: details.${key} = ${String(error.details?.[key])}, expected ${String(value)}`);
      }
    }
  }

  // -- commands --

  private eventsSince(mark: number): Recorded[] {
    return this.events.slice(mark);
  }

  /** §5.1, computed from the model (which is current at the start of every top-level command). */
  private expectSubmit(agent: string, owner: Lifetime | undefined, signal: Lifetime | undefined, overflow: 'reject' | 'queue', deadline: number): Expected {
    if (this.draining) return { decision: 'drain_refused', code: 'deployment_draining' };
    const ownerAborted = owner?.controller.signal.aborted === true;
    if (signal?.controller.signal.aborted) {
      return { decision: 'refused', reason: signal.controller.signal.reason, outcome: ownerAborted ? 'owner_down' : 'requester_down' };
    }
    if (ownerAborted) return { decision: 'refused', code: 'owner_down', outcome: 'owner_down' };
    const all = this.modelCounts();
    const mine = this.modelCounts(agent);
    const limit = this.limits.get(agent) as number;
    if (all.active < this.scenario.globalLimit && mine.active < limit) return { decision: 'granted', outcome: 'granted' };
    if (overflow === 'reject') {
      return { decision: 'refused', code: 'concurrency_limit_reached', outcome: 'rejected', details: { limit_scope: mine.active >= limit ? 'agent' : 'global' } };
    }
    if (all.queued >= this.scenario.maxQueue) return { decision: 'refused', code: 'admission_queue_full', outcome: 'queue_full', details: { max_queue: this.scenario.maxQueue } };
    if (deadline <= this.clock.monotonicNow()) return { decision: 'refused', code: 'queue_deadline_exceeded', outcome: 'expired' };
    return { decision: 'queued', outcome: 'queued' };
  }

  private async submit(cmd: Extract<Cmd, { t: 'submit' }>): Promise<void> {
    const agent = this.agents[cmd.agent % this.agents.length];
    const owner = this.lifetimeFor(cmd.owner);
    const signal = cmd.signal === 'sameAsOwner' ? owner : this.lifetimeFor(cmd.signal);
    if (owner) owner.usedAsOwner = true;
    if (signal) signal.usedAsSignal = true;
    const now = this.clock.monotonicNow();
    const opts: AdmissionRequestOptions = {};
    if (owner) opts.owner = owner.controller.signal;
    if (signal) opts.signal = signal.controller.signal;
    if (cmd.overflow !== undefined) opts.overflow = cmd.overflow;
    let deadline: number;
    if (cmd.deadline !== undefined) {
      opts.deadline = typeof cmd.deadline === 'object' ? now + cmd.deadline.halves / 2 : cmd.deadline;
      deadline = opts.deadline === 'infinity' ? Infinity : opts.deadline;
    } else {
      const timeout = cmd.queueTimeoutMs ?? this.scenario.defaultQueueTimeoutMs;
      deadline = timeout === 'infinity' ? Infinity : now + timeout;
    }
    if (cmd.queueTimeoutMs !== undefined) opts.queueTimeoutMs = cmd.queueTimeoutMs;
    const expected = this.expectSubmit(agent, owner, signal, cmd.overflow ?? this.scenario.overflow, deadline);
    const req: Req = {
      id: this.requests.length,
      agent,
      mode: cmd.mode,
      owner,
      signal,
      deadline,
      expected,
      seq: expected.decision === 'queued' ? this.enqueueSeq++ : -1,
      settled: 0,
      revoked: 0,
      releaseTrue: 0,
      cancelTrue: 0,
      onRevoke: cmd.onRevoke,
    };
    this.requests.push(req);
    const label = `request #${req.id} (${agent})`;
    const mark = this.events.length;
    if (cmd.mode === 'submit') {
      let result: SubmitResult | undefined;
      try {
        const answer = this.controller.submit(agent, opts);
        result = answer instanceof Promise ? await answer : answer;
      } catch (error) {
        req.settled++;
        req.error = error;
        this.checkRefusal(req, error, label);
      }
      if (result !== undefined) {
        this.check(Object.isFrozen(result), () => `${label}: submit result not frozen`);
        this.check(REF_PATTERN.test(result.requestRef), () => `${label}: request ref format`);
        this.check(result.status === expected.decision, () => `${label}: submit returned ${result?.status}, expected ${expected.decision}`);
        req.ref = result.requestRef;
        if (result.status === 'granted') {
          this.check(result.permit.requestRef === result.requestRef, () => `${label}: permit.requestRef differs from requestRef`);
          const permit = result.permit;
          this.onPermit(req, permit);
          this.controller.await(result.requestRef).then(
            (same) => this.check(same === permit, () => `${label}: await(ref) of an active request gave another permit`),
            (error: unknown) => this.fail(`${label}: await(ref) of an active request rejected with ${describe_(error)}`),
          );
        } else {
          const want = deadline === Infinity ? 'infinity' : deadline;
          this.check(result.deadline === want, () => `${label}: queued with deadline ${String(result?.status === 'queued' && result.deadline)}, expected ${want}`);
          this.controller.await(result.requestRef).then(
            (permit) => this.onPermit(req, permit),
            (error: unknown) => this.onError(req, error),
          );
        }
      }
    } else {
      let promise: Promise<Permit> | undefined;
      try {
        promise = this.controller.acquire(agent, opts);
      } catch (error) {
        this.fail(`${label}: acquire threw synchronously ${describe_(error)}`);
        req.settled++;
      }
      promise?.then(
        (permit) => this.onPermit(req, permit),
        (error: unknown) => this.onError(req, error),
      );
    }
    // exactly one decision event (none for a submit refused while draining), with wait_ms 0
    const effects = this.effectsOfCall();
    if (effects) await effects;
    const events = this.eventsSince(mark);
    if (expected.outcome === undefined) {
      this.check(events.length === 0, () => `${label}: refused while draining but emitted ${events.map((e) => e.payload.outcome).join(',')}`);
    } else {
      const cls: EventClass = expected.decision === 'granted' ? 'grantSubmit' : expected.decision === 'queued' ? 'enqueue' : 'refuse';
      const first = events[0];
      this.check(
        events.length === 1 && first.payload.outcome === expected.outcome && first.payload.agent_id === agent && first.payload.wait_ms === 0 && first.cls === cls,
        () => `${label}: expected one ${expected.outcome} event, got ${JSON.stringify(events.map((e) => e.payload))}`,
      );
    }
  }

  private async release(cmd: Extract<Cmd, { t: 'release' }>): Promise<void> {
    const holders = this.requests.filter((r) => r.permit !== undefined);
    if (holders.length === 0) return;
    const req = holders[cmd.req % holders.length];
    const permit = req.permit as Permit;
    const label = `release of request #${req.id} (${req.agent})`;
    const wasActive = stateOf(req) === 'active';
    const mark = this.events.length;
    if (cmd.how === 'lookalike') {
      const lookalike = { id: permit.id, agentId: permit.agentId, requestRef: permit.requestRef, signal: permit.signal } as unknown as Permit;
      this.check(this.controller.release(lookalike) === false, () => `${label}: a look-alike object was accepted`);
      const effects = this.effectsOfCall();
      if (effects) await effects;
      this.check(this.eventsSince(mark).length === 0 && stateOf(req) === (wasActive ? 'active' : 'done'), () => `${label}: a look-alike object changed state`);
      return;
    }
    if (cmd.how === 'dispose') {
      permit[Symbol.dispose]();
      if (wasActive) req.releaseTrue++;
    } else {
      const first = this.controller.release(permit);
      if (first) req.releaseTrue++;
      this.check(first === wasActive, () => `${label} returned ${first}, permit was ${wasActive ? 'active' : 'revoked'}`);
      if (cmd.how === 'twice') {
        const second = this.controller.release(permit);
        if (second) req.releaseTrue++;
        this.check(second === false, () => `${label}: second release returned true`);
      }
    }
    const effects = this.effectsOfCall();
    if (effects) await effects;
    const events = this.eventsSince(mark);
    if (wasActive) {
      this.check(events[0]?.payload.outcome === 'released' && events[0].cls === 'revoke' && events[0].payload.agent_id === req.agent, () => `${label}: first event ${JSON.stringify(events[0]?.payload)}`);
      this.check(req.revoked === 1 && req.revokeOutcome === 'released', () => `${label}: permit.signal aborted ${req.revoked}× with outcome ${req.revokeOutcome}`);
    } else {
      this.check(events.length === 0, () => `${label} of a revoked permit emitted ${JSON.stringify(events.map((e) => e.payload))}`);
    }
  }

  private async cancel(cmd: Extract<Cmd, { t: 'cancel' }>): Promise<void> {
    const mark = this.events.length;
    if (cmd.how === 'unknown') {
      this.check(this.controller.cancel(`request-${'A'.repeat(24)}`) === false, () => 'cancel of an unknown ref returned true');
      const effects = this.effectsOfCall();
      if (effects) await effects;
      this.check(this.eventsSince(mark).length === 0, () => 'cancel of an unknown ref emitted telemetry');
      return;
    }
    const known = this.requests.filter((r) => r.ref !== undefined);
    if (known.length === 0) return;
    const req = known[cmd.req % known.length];
    const label = `cancel of request #${req.id} (${req.agent})`;
    const before = stateOf(req);
    const first = this.controller.cancel(req.ref as string);
    if (first) req.cancelTrue++;
    this.check(first === (before === 'queued' || before === 'active'), () => `${label} (${before}) returned ${first}`);
    if (cmd.how === 'twice') {
      const second = this.controller.cancel(req.ref as string);
      if (second) req.cancelTrue++;
      this.check(second === false, () => `${label}: second cancel returned true`);
    }
    const effects = this.effectsOfCall();
    if (effects) await effects;
    const events = this.eventsSince(mark);
    if (before === 'queued') {
      this.check(
        events.length === 1 && events[0].payload.outcome === 'cancelled' && events[0].cls === 'leaveQueue' && events[0].payload.agent_id === req.agent,
        () => `${label} (queued): events ${JSON.stringify(events.map((e) => e.payload))}`,
      );
    } else if (before === 'active') {
      this.check(events[0]?.payload.outcome === 'cancelled' && events[0].cls === 'revoke' && events[0].payload.agent_id === req.agent, () => `${label} (active): first event ${JSON.stringify(events[0]?.payload)}`);
      this.check(req.revoked === 1 && req.revokeOutcome === 'cancelled', () => `${label}: permit.signal aborted ${req.revoked}× with outcome ${req.revokeOutcome}`);
    } else {
      this.check(events.length === 0, () => `${label} (done) emitted ${JSON.stringify(events.map((e) => e.payload))}`);
    }
  }

  private async abort(lifetime: Lifetime): Promise<void> {
    const label = `abort of signal #${lifetime.index}`;
    let ownerQueued = 0;
    let signalQueued = 0;
    const revokedByOwner: Req[] = [];
    const keepRunning: Req[] = [];
    for (const req of this.requests) {
      const state = stateOf(req);
      if (state === 'queued' && req.owner === lifetime) ownerQueued++;
      else if (state === 'queued' && req.signal === lifetime && !req.owner?.controller.signal.aborted) signalQueued++;
      if (state === 'active' && req.owner === lifetime) revokedByOwner.push(req);
      else if (state === 'active') keepRunning.push(req);
    }
    const nested = this.nestedRuns;
    const mark = this.events.length;
    lifetime.controller.abort(new Error(`reason of signal #${lifetime.index}`));
    const effects = this.effectsOfCall();
    if (effects) await effects;
    const events = this.eventsSince(mark);
    const left = (outcome: string) => events.filter((e) => e.cls === 'leaveQueue' && e.payload.outcome === outcome).length;
    this.check(left('owner_down') <= ownerQueued, () => `${label}: ${left('owner_down')} owner_down removals for ${ownerQueued} queued requests it owns`);
    this.check(left('requester_down') <= signalQueued, () => `${label}: ${left('requester_down')} requester_down removals for ${signalQueued} queued requests it signals`);
    for (const req of revokedByOwner) {
      // (a listener run by an earlier revocation of this abort may have released or cancelled it first)
      const outcomeOk = req.revokeOutcome === 'owner_down' || this.nestedRuns > nested;
      this.check(req.revoked === 1 && outcomeOk, () => `${label}: permit of request #${req.id} revoked ${req.revoked}× with ${req.revokeOutcome}`);
    }
    if (this.nestedRuns === nested) {
      // aborting a requester signal after the grant never revokes (§4, §5.6)
      for (const req of keepRunning) this.check(req.revoked === 0, () => `${label}: permit of request #${req.id}, which it does not own, was revoked`);
    }
  }

  private async advance(halves: number): Promise<void> {
    const target = this.clock.monotonicNow() + halves / 2;
    const expiring = this.requests.filter((r) => stateOf(r) === 'queued' && r.deadline <= target).length;
    const mark = this.events.length;
    this.clock.advance(halves / 2);
    const effects = this.effectsOfCall();
    if (effects) await effects;
    const events = this.eventsSince(mark);
    this.check(
      events.length === expiring && events.every((e) => e.payload.outcome === 'expired' && e.cls === 'leaveQueue'),
      () => `advance to ${target}: ${expiring} requests reach their deadline, events ${JSON.stringify(events.map((e) => e.payload))}`,
    );
  }

  private async beginDrain(): Promise<void> {
    const queued = this.requests.filter((r) => stateOf(r) === 'queued').sort((x, y) => x.seq - y.seq);
    const first = !this.draining;
    if (first) {
      this.draining = true;
      this.drainStartedAt = this.clock.wallNow();
    }
    const mark = this.events.length;
    const status = this.controller.beginDrain();
    const effects = this.effectsOfCall();
    if (effects) await effects;
    const events = this.eventsSince(mark);
    this.checkStatus(status, 'beginDrain() result');
    this.check(status.queue_length === 0, () => `beginDrain left ${status.queue_length} queued`);
    const agents = events.map((e) => `${e.payload.outcome}:${e.cls}:${e.payload.agent_id}`).join(',');
    const want = (first ? queued : []).map((r) => `deployment_draining:leaveQueue:${r.agent}`).join(',');
    this.check(agents === want, () => `beginDrain must fail queued requests in enqueue order: expected [${want}], got [${agents}]`);
  }

  async command(cmd: Cmd, index: number): Promise<void> {
    this.step = `command ${index} ${fc.stringify(cmd)}`;
    this.nestedRuns = 0;
    const eventsBefore = this.events.length;
    switch (cmd.t) {
      case 'submit':
        await this.submit(cmd);
        break;
      case 'release':
        await this.release(cmd);
        break;
      case 'cancel':
        await this.cancel(cmd);
        break;
      case 'abortOwner':
      case 'abortSignal': {
        const candidates = this.lifetimes.filter((l) => !l.controller.signal.aborted && (cmd.t === 'abortOwner' ? l.usedAsOwner : l.usedAsSignal));
        if (candidates.length > 0) await this.abort(candidates[cmd.which % candidates.length]);
        break;
      }
      case 'advance':
        await this.advance(cmd.halves);
        break;
      case 'status': {
        this.checkStatus(this.controller.status(), 'status()');
        this.check(this.events.length === eventsBefore, () => 'status() emitted telemetry although nothing had expired');
        break;
      }
      case 'beginDrain':
        await this.beginDrain();
        break;
    }
    this.throwIfViolated();
    await this.fixture.settle();
    this.step = `after command ${index} ${fc.stringify(cmd)}`;
    this.checkAfterCommand();
    this.throwIfViolated();
  }

  /** Ends the run: drain the queue, release every permit, and check that every request has ended exactly once. */
  async finish(): Promise<void> {
    await this.command({ t: 'beginDrain' }, -1);
    for (const req of this.requests) {
      if (stateOf(req) === 'active') await this.command({ t: 'release', req: this.requests.filter((r) => r.permit).indexOf(req), how: 'once' }, -1);
    }
    await this.fixture.settle();
    this.step = 'end of run';
    const status = this.controller.status();
    this.check(status.active === 0 && status.queue_length === 0 && Object.keys(status.per_agent).length === 0, () => `final status ${JSON.stringify(status)}`);
    let decisions = 0;
    let refusedWithEvent = 0;
    let queuedFailures = 0;
    for (const req of this.requests) {
      const label = `request #${req.id} (${req.agent}, ${req.expected.decision})`;
      this.check(req.settled === 1, () => `${label} has ${req.settled} outcomes at the end`);
      if (req.permit) this.check(req.revoked === 1, () => `${label}: permit.signal aborted ${req.revoked}× by the end`);
      if (req.expected.decision !== 'drain_refused') decisions++;
      if (req.expected.decision === 'refused') refusedWithEvent++;
      if (req.expected.decision === 'queued' && req.permit === undefined) queuedFailures++;
    }
    let grants = 0;
    let enqueued = 0;
    let refusals = 0;
    let leftQueue = 0;
    for (const agent of this.agents) {
      const c = this.counts.get(agent) as AgentCounts;
      this.check(c.grants === c.revocations, () => `agent ${agent}: ${c.grants} grants but ${c.revocations} revocations at the end`);
      this.check(c.enqueued === c.dequeued, () => `agent ${agent}: ${c.enqueued} queued but ${c.dequeued} left the queue at the end`);
      grants += c.grants;
      enqueued += c.enqueued;
      refusals += c.refusals;
    }
    leftQueue = this.events.filter((e) => e.cls === 'leaveQueue').length;
    const submitEvents = this.events.filter((e) => e.cls === 'grantSubmit' || e.cls === 'enqueue' || e.cls === 'refuse').length;
    this.check(submitEvents === decisions, () => `${submitEvents} submit decisions in telemetry for ${decisions} admitted submits`);
    this.check(refusals === refusedWithEvent, () => `${refusals} refusals in telemetry for ${refusedWithEvent} refused submits`);
    this.check(leftQueue === queuedFailures, () => `${leftQueue} queued failures in telemetry, callers saw ${queuedFailures}`);
    this.check(grants === this.requests.filter((r) => r.permit).length, () => `${grants} grants in telemetry`);
    this.check(enqueued === this.requests.filter((r) => r.expected.decision === 'queued').length, () => `${enqueued} enqueues in telemetry`);
    // a last macrotask turn, so a rejection left behind by the calls above is reported within this run
    await tick();
    this.check(unhandled.length === 0, () => `unhandled rejection: ${describe_(unhandled[0])}`);
    this.throwIfViolated();
  }
}

async function play(suite: AdmissionSuite, scenario: Scenario, cmds: Cmd[]): Promise<void> {
  unhandled.length = 0;
  const run = new Run(scenario, suite);
  await run.start();
  try {
    for (let i = 0; i < cmds.length; i++) await run.command(cmds[i], i);
    await run.finish();
  } finally {
    await run.close();
  }
}

// ---- properties ---------------------------------------------------------------------------------

/** Runs per property; raise it locally (e.g. `ADMISSION_PROPERTY_RUNS=5000`) to search harder. */
const RUNS = Number(process.env.ADMISSION_PROPERTY_RUNS ?? 250);
/** Runs per property on the cluster controller, whose every decision is a database transaction. */
const CLUSTER_RUNS = Number(process.env.ADMISSION_CLUSTER_PROPERTY_RUNS ?? 15);
const MAX_COMMANDS = 60;

describe.each(ADMISSION_VARIANTS)('%s controller', (variantName) => {
  const suite = admissionSuite(variantName);
  const runs = suite.variant.synchronous ? RUNS : CLUSTER_RUNS;
  const timeoutMs = suite.variant.synchronous ? Math.max(30_000, RUNS * 40) : Math.max(120_000, CLUSTER_RUNS * 8_000);
  // a cluster run takes about half a second: its first counterexample is reported unshrunk (replay it with
  // ADMISSION_PROPERTY_SEED and the printed path)
  const parameters: fc.Parameters<[Scenario, Cmd[]]> = {
    numRuns: runs,
    endOnFailure: !suite.variant.synchronous,
    ...(process.env.ADMISSION_PROPERTY_SEED ? { seed: Number(process.env.ADMISSION_PROPERTY_SEED) } : {}),
  };
  const property = (profile: Profile) => fc.asyncProperty(scenarioArb(profile), commandsArb(profile, MAX_COMMANDS), (scenario, cmds) => play(suite, scenario, cmds));

  describe('admission properties (spec 01 §11)', () => {
    it('keeps the §11 invariants over random interleavings of submits, releases, cancels, aborts, clock advances and drain', async () => {
      await fc.assert(property({ reentrant: false, queueHeavy: false }), parameters);
    }, timeoutMs);

    it('keeps them when telemetry and permit.signal listeners call back into the controller (§9)', async () => {
      await fc.assert(property({ reentrant: true, queueHeavy: false }), parameters);
    }, timeoutMs);

    it('grants each agent in enqueue order and never leaves an eligible request waiting, under queue pressure', async () => {
      await fc.assert(property({ reentrant: false, queueHeavy: true }), parameters);
    }, timeoutMs);
  });
});
