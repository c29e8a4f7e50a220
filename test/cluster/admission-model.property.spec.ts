/**
 * Cluster admission against the single-instance model (spec 08 §6): random interleavings of submit,
 * release, cancel, owner abort, requester abort, clock advances and kills across three
 * `ClusterAdmissionController` instances on one database, played at the same time on one process-local
 * `AdmissionController` with the same limits. After every command the property waits until the cluster
 * is quiescent (no decision in flight, every instance's own counts equal to its rows, no telemetry
 * arriving), then compares: which requests hold a permit and which wait in what order (the tables
 * against the model), what every caller saw of every request, the telemetry outcomes per agent, and
 * the invariants of spec 01 §11 on the tables. The documented differences it encodes are listed in
 * `admission-model.ts`.
 *
 * Runs are few (each decision is a transaction); replay one with ADMISSION_MODEL_SEED and
 * ADMISSION_MODEL_PATH, search harder with ADMISSION_MODEL_RUNS, shrink with ADMISSION_MODEL_SHRINK=1.
 */
import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import { AdmissionController } from '../../src/admission/admission-controller';
import type { AdmissionRequestOptions } from '../../src/admission/admission-request';
import type { AdmissionDecisionEvent } from '../../src/admission/admission.types';
import { AdmissionError } from '../../src/admission/admission.errors';
import { rejected } from '../../src/shared/testing/rejected';
import { ManualClock } from '../../src/shared/time/manual-clock';
import { openDatabaseHarness, useHarness, type DatabaseHarness } from '../support/database-harness';
import { eventually } from '../support/eventually';
import { clusterNode, terminateLockSession } from './admission-fixture';
import { AGENTS, MODEL_CONFIG, NodeClock, Observed, REAP_INTERVAL_MS, errorLabel, limitOf, quiescence, type ModelNode } from './admission-model';

type LifetimeSpec = 'none' | 'new' | 'newAborted' | { reuse: number };
/** Default queue timeout, a `queueTimeoutMs`, or a deadline of now + halves / 2 ms (negative: in the past). */
type TimingSpec = 'default' | { timeoutMs: number } | { halves: number };
type Cmd =
  | { t: 'submit'; node: number; agent: number; owner: LifetimeSpec; signal: LifetimeSpec; overflow: 'default' | 'queue' | 'reject'; timing: TimingSpec }
  | { t: 'release' | 'cancel' | 'abortOwner' | 'abortSignal'; pick: number }
  | { t: 'advance'; halves: number }
  | { t: 'kill'; node: number; how: 'terminate' | 'stopInstance' };

const lifetimeArb: fc.Arbitrary<LifetimeSpec> = fc.oneof(
  { weight: 6, arbitrary: fc.constant('none' as const) },
  { weight: 4, arbitrary: fc.constant('new' as const) },
  { weight: 1, arbitrary: fc.constant('newAborted' as const) },
  { weight: 2, arbitrary: fc.record({ reuse: fc.nat(7) }) },
);
const timingArb: fc.Arbitrary<TimingSpec> = fc.oneof(
  { weight: 5, arbitrary: fc.constant('default' as const) },
  { weight: 2, arbitrary: fc.record({ timeoutMs: fc.integer({ min: 0, max: 60 }) }) },
  { weight: 2, arbitrary: fc.record({ halves: fc.integer({ min: -10, max: 120 }) }) },
);
const overflowArb = fc.oneof(
  { weight: 4, arbitrary: fc.constant('default' as const) },
  { weight: 1, arbitrary: fc.constant('queue' as const) },
  { weight: 1, arbitrary: fc.constant('reject' as const) },
);
const pick = (t: 'release' | 'cancel' | 'abortOwner' | 'abortSignal') => fc.record({ t: fc.constant(t), pick: fc.nat(40) });
/** How an instance dies; `stopInstance` leaves a zombie (its lock is gone, its controller keeps running). */
const KILL_MODES = ['terminate', 'stopInstance'] as const;
const commandArb: fc.Arbitrary<Cmd> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.record(
      { t: fc.constant('submit' as const), node: fc.nat(2), agent: fc.nat(AGENTS.length - 1), owner: lifetimeArb, signal: lifetimeArb, overflow: overflowArb, timing: timingArb },
    ),
  },
  { weight: 2, arbitrary: pick('release') },
  { weight: 2, arbitrary: pick('cancel') },
  { weight: 1, arbitrary: pick('abortOwner') },
  { weight: 1, arbitrary: pick('abortSignal') },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('advance' as const), halves: fc.integer({ min: 0, max: 60 }) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('kill' as const), node: fc.nat(2), how: fc.constantFrom(...KILL_MODES) }) },
);

const RUNS = Number(process.env.ADMISSION_MODEL_RUNS ?? 25);
const MAX_COMMANDS = 25;
const MAX_KILLS = 2;
/** A killed instance never takes its lock back within a run. */
const NEVER = { initialMs: 60_000, maxMs: 60_000 };
const P = 'agent_runtime_admission_permits';
const Q = 'agent_runtime_admission_queue';
const ROWS_SQL = `SELECT 'permit' AS kind, request_id, agent_id, instance_id, 0::bigint AS seq FROM ${P}
  UNION ALL SELECT 'queued', request_id, agent_id, instance_id, seq FROM ${Q}`;
const TRUNCATE = `TRUNCATE ${P}, ${Q}, agent_runtime_admission_config, agent_runtime_cluster_instances`;

interface Lifetime {
  readonly index: number;
  readonly controller: AbortController;
  asOwner: boolean;
  asSignal: boolean;
}

interface Req {
  readonly id: number;
  readonly node: ModelNode;
  readonly agent: string;
  readonly cluster: Observed;
  readonly model: Observed;
  readonly owner: Lifetime | undefined;
  /** The request's owner in the model: aborted with `owner` or by a kill of `node` (differences 1 and 3). */
  readonly ownerInModel: AbortController;
  /** What the request was, in the model, when its instance was killed. */
  killed?: 'queued' | 'active';
}

interface Row {
  kind: 'permit' | 'queued';
  request_id: string;
  agent_id: string;
  instance_id: string;
  seq: string;
}

const eventKeys = (events: readonly AdmissionDecisionEvent[]) => events.map((event) => `${event.outcome}:${event.agent_id}`).sort();

class Run {
  private readonly clock = new ManualClock(1000);
  private readonly modelEvents: AdmissionDecisionEvent[] = [];
  private readonly model = new AdmissionController(MODEL_CONFIG, { clock: this.clock, events: { emit: (_name, payload) => this.modelEvents.push(payload as AdmissionDecisionEvent) } });
  private readonly reasons = new Map<unknown, number>();
  private readonly label = errorLabel(this.reasons);
  /** Every instance of the run, the killed ones included; `slots` are the three that take commands. */
  private readonly nodes: ModelNode[] = [];
  private readonly slots: ModelNode[] = [];
  private readonly requests: Req[] = [];
  private readonly byRef = new Map<string, Req>();
  private readonly lifetimes: Lifetime[] = [];
  private readonly violations: string[] = [];
  private kills = 0;
  private step = 'start';

  constructor(
    private readonly h: DatabaseHarness,
    private readonly runId: number,
  ) {}

  async start(): Promise<void> {
    for (let slot = 0; slot < 3; slot++) this.slots.push(await this.newNode(slot));
  }

  async close(): Promise<void> {
    for (const node of this.nodes) {
      await node.cluster.controller.stop().catch(() => undefined);
      await node.cluster.instance.stop().catch(() => undefined);
      await node.cluster.dataSource.destroy().catch(() => undefined);
    }
    await this.h.sql(TRUNCATE);
  }

  async command(cmd: Cmd, index: number): Promise<void> {
    this.step = `command ${index} ${fc.stringify(cmd)}`;
    const marks = new Map(this.nodes.map((node) => [node, node.cluster.events.length]));
    const modelMark = this.modelEvents.length;
    switch (cmd.t) {
      case 'submit':
        await this.submit(cmd);
        break;
      case 'release':
        this.release(this.pickOf(this.requests.filter((req) => req.cluster.permit !== undefined), cmd.pick));
        break;
      case 'cancel':
        this.cancel(this.pickOf(this.requests.filter((req) => req.cluster.ref !== undefined), cmd.pick));
        break;
      case 'abortOwner':
      case 'abortSignal': {
        const open = this.lifetimes.filter((l) => !l.controller.signal.aborted && (cmd.t === 'abortOwner' ? l.asOwner : l.asSignal));
        this.abort(this.pickOf(open, cmd.pick));
        break;
      }
      case 'advance':
        this.clock.advance(cmd.halves / 2);
        break;
      case 'kill':
        await this.kill(cmd.node, cmd.how);
        break;
    }
    await this.settle();
    const got = eventKeys(this.nodes.flatMap((node) => node.cluster.events.slice(marks.get(node) ?? 0)));
    const want = eventKeys(this.modelEvents.slice(modelMark));
    this.check(isDeepStrictEqual(got, want), () => `telemetry outcomes ${JSON.stringify(got)}, the model's ${JSON.stringify(want)}`);
    await this.compare();
  }

  /** Every live instance reads the cluster (its status is then the model's), then everything is released or cancelled. */
  async finish(): Promise<void> {
    this.step = 'end of run';
    await Promise.all(this.slots.map((node) => this.reap(node)));
    await this.settle();
    const model = this.model.status();
    for (const node of this.slots) {
      const { instances_live, instance, ...status } = node.cluster.controller.status();
      this.check(instances_live === 3, () => `${node.name} counts ${instances_live} live instances`);
      this.check(isDeepStrictEqual({ ...status, per_agent: { ...status.per_agent } }, { ...model, per_agent: { ...model.per_agent } }), () => `${node.name} status ${JSON.stringify(status)}, the model's ${JSON.stringify(model)}`);
      this.check(instance.active + instance.queued === this.requests.filter((req) => req.node === node && req.cluster.state !== 'done').length, () => `${node.name} own counts ${JSON.stringify(instance)}`);
    }
    // the queue first: a release could grant a request the model would then see cancelled while active
    for (const req of this.requests.filter((each) => each.cluster.state === 'queued')) this.cancel(req);
    await this.settle();
    await this.compare();
    for (const req of this.requests.filter((each) => each.cluster.state === 'active')) this.release(req);
    await this.settle();
    await this.compare();
    const rows = await this.h.sql<Row>(ROWS_SQL);
    this.check(rows.length === 0 && this.model.status().active === 0 && this.model.status().queue_length === 0, () => `left behind: ${JSON.stringify(rows)}`);
    this.throwIfViolated();
  }

  // ---- commands ------------------------------------------------------------------------------

  private async submit(cmd: Extract<Cmd, { t: 'submit' }>): Promise<void> {
    const node = this.slots[cmd.node];
    const agent = AGENTS[cmd.agent];
    const owner = this.lifetime(cmd.owner, 'owner');
    let signal = this.lifetime(cmd.signal, 'signal');
    // the model's owner is a stand-in of `owner`, aborted around it (see abort): one signal as both owner and
    // requester would reach the two sides at different moments (spec 01 §4 settles that case in the unit tests)
    if (signal === owner) signal = undefined;
    const ownerInModel = new AbortController();
    if (owner?.controller.signal.aborted) ownerInModel.abort();
    const req: Req = { id: this.requests.length, node, agent, cluster: new Observed(this.label), model: new Observed(this.label), owner, ownerInModel };
    const common: AdmissionRequestOptions = { ...(signal && { signal: signal.controller.signal }), ...(cmd.overflow !== 'default' && { overflow: cmd.overflow }) };
    let clusterAnswer: { result: Awaited<ReturnType<typeof node.cluster.controller.submit>> } | { error: unknown };
    try {
      const options = { ...common, ...(owner && { owner: owner.controller.signal }), ...timing(cmd.timing, node.clock.monotonicNow()) };
      clusterAnswer = { result: await node.cluster.controller.submit(agent, options) };
    } catch (error) {
      clusterAnswer = { error };
    }
    // a live instance on a reachable database never fails a submit closed
    if ('error' in clusterAnswer && clusterAnswer.error instanceof AdmissionError && clusterAnswer.error.code === 'admission_store_unavailable') {
      const { details } = clusterAnswer.error;
      this.check(false, () => `${node.name} (lock held: ${node.cluster.instance.live}) failed a submit closed: ${JSON.stringify(details ?? {})}`);
      return;
    }
    try {
      req.model.submitted(this.model.submit(agent, { ...common, owner: ownerInModel.signal, ...timing(cmd.timing, this.clock.monotonicNow()) }), this.model);
    } catch (error) {
      req.model.refused(error);
    }
    if ('result' in clusterAnswer) req.cluster.submitted(clusterAnswer.result, node.cluster.controller);
    else req.cluster.refused(clusterAnswer.error);
    this.requests.push(req);
    if (req.cluster.ref) this.byRef.set(req.cluster.ref, req);
  }

  private release(req: Req | undefined): void {
    if (req === undefined) return;
    const got = req.node.cluster.controller.release(req.cluster.permit as NonNullable<Observed['permit']>);
    const want = req.model.permit !== undefined && this.model.release(req.model.permit);
    this.check(got === want, () => `release of #${req.id} answered ${got}, the model ${want}`);
  }

  private cancel(req: Req | undefined): void {
    if (req === undefined) return;
    const got = req.node.cluster.controller.cancel(req.cluster.ref as string);
    const want = req.model.ref !== undefined && this.model.cancel(req.model.ref);
    this.check(got === want, () => `cancel of #${req.id} answered ${got}, the model ${want}`);
  }

  /**
   * Aborts a signal of the test. In the model its owned requests go in the cluster's order (difference 3):
   * the queued ones first, as every instance removes them at once, then the permits, which the cluster
   * revokes through decisions. Listener order would otherwise let the model grant a queued request on
   * one permit's revocation and revoke it again at once, where the cluster fails it while queued.
   */
  private abort(lifetime: Lifetime | undefined): void {
    if (lifetime === undefined) return;
    const [queued, active] = this.ownedInModel((req) => req.owner === lifetime);
    for (const req of queued) req.ownerInModel.abort();
    const reason = new Error(`lifetime ${lifetime.index}`);
    this.reasons.set(reason, lifetime.index);
    lifetime.controller.abort(reason);
    for (const req of active) req.ownerInModel.abort();
  }

  /** The requests `owns` selects that are queued, and those that are active, in the model. */
  private ownedInModel(owns: (req: Req) => boolean): [Req[], Req[]] {
    const owned = this.requests.filter(owns);
    return [owned.filter((req) => req.model.state === 'queued'), owned.filter((req) => req.model.state === 'active')];
  }

  private async kill(slot: number, how: 'terminate' | 'stopInstance'): Promise<void> {
    if (this.kills >= MAX_KILLS) return;
    this.kills++;
    const node = this.slots[slot];
    if (how === 'terminate') this.check((await terminateLockSession(this.h, node.name)) === 1, () => `${node.name} had no lock session`);
    else await node.cluster.instance.stop();
    await eventually(() => !node.cluster.instance.live, 5000, `${node.name} to lose its lock`);
    node.alive = false;
    // the model: the owner abort of all the instance owns, in the cluster's order (difference 3)
    const [queued, active] = this.ownedInModel((req) => req.node === node);
    for (const req of queued) req.killed = 'queued';
    for (const req of active) req.killed = 'active';
    for (const req of [...queued, ...active]) req.ownerInModel.abort();
    // the cluster (difference 2): the live instances see it dead, but may not reap its permits yet
    const rowsOf = async () => {
      const [{ permits }] = await this.h.sql<{ permits: number }>(`SELECT count(*)::int AS permits FROM ${P} WHERE instance_id = $1`, [node.name]);
      return permits;
    };
    await this.settle();
    const heldThere = node.cluster.controller.status().instance.active;
    await Promise.all(this.slots.filter((other) => other.alive).map((other) => this.reap(other)));
    this.check((await rowsOf()) === heldThere, () => `the peers reaped the permits of ${node.name} before its grace ran out`);
    // its own clock runs out its lock grace: it revokes what it holds and deletes its rows itself
    node.clock.jump(node.cluster.instance.lockGraceMs + 1);
    this.check(node.cluster.controller.status().instance.active === 0, () => `${node.name} still holds permits past its grace`);
    await eventually(async () => (await rowsOf()) === 0, 10_000, `the rows of ${node.name} to go`);
    const refusal = await rejected<AdmissionError>(node.cluster.controller.submit('a'));
    this.check(refusal.code === 'admission_store_unavailable', () => `the killed ${node.name} answered a submit with ${this.label(refusal)}`);
    this.slots[slot] = await this.newNode(slot);
  }

  // ---- the cluster ---------------------------------------------------------------------------

  private async newNode(slot: number): Promise<ModelNode> {
    const clock = new NodeClock(this.clock, slot * 1_000_000 + this.nodes.length * 10_000);
    const name = `model-${this.runId}-${slot}-${this.nodes.length}`;
    const cluster = await clusterNode(this.h, name, MODEL_CONFIG, { clock, reapIntervalMs: REAP_INTERVAL_MS, instanceBackoff: NEVER });
    const node: ModelNode = { name, clock, cluster, alive: true };
    this.nodes.push(node);
    return node;
  }

  /** Runs an instance's periodic reap and waits until it has finished (the controller re-arms it). */
  private settle(): Promise<void> {
    return quiescence(this.h, this.nodes).catch((error: Error) => {
      throw new Error(`[${this.step}] ${error.message}`);
    });
  }

  private async reap(node: ModelNode): Promise<void> {
    this.check(node.clock.firePoll(), () => `${node.name} had no reap armed`);
    await eventually(() => node.clock.pollArmed, 10_000, `the reap of ${node.name}`);
  }

  /** The tables and every caller's observations against the model, and spec 01 §11 on the tables. */
  private async compare(): Promise<void> {
    const rows = await this.h.sql<Row>(ROWS_SQL);
    const permits = rows.filter((row) => row.kind === 'permit');
    const queue = rows.filter((row) => row.kind === 'queued').sort((x, y) => Number(x.seq) - Number(y.seq));
    for (const row of rows) {
      const req = this.byRef.get(row.request_id);
      this.check(req !== undefined && req.node.name === row.instance_id && req.agent === row.agent_id, () => `row ${JSON.stringify(row)} is no request of its instance`);
    }
    for (const req of this.requests) {
      const want = req.model.summary();
      // difference 1: a killed instance's waiters fail with admission_store_unavailable
      if (req.killed === 'queued' && want.outcome === 'owner_down') want.outcome = 'admission_store_unavailable';
      const got = req.cluster.summary();
      this.check(isDeepStrictEqual(got, want), () => `request #${req.id} (${req.agent} on ${req.node.name}${req.killed ? `, killed ${req.killed}` : ''}): ${JSON.stringify(got)}, the model ${JSON.stringify(want)}`);
    }
    const ids = (list: readonly Row[]) => list.map((row) => this.byRef.get(row.request_id)?.id);
    const held = ids(permits).sort((x, y) => (x ?? -1) - (y ?? -1));
    const modelHeld = this.requests.filter((req) => req.model.state === 'active').map((req) => req.id);
    this.check(isDeepStrictEqual(held, modelHeld), () => `permits held by ${JSON.stringify(held)}, in the model by ${JSON.stringify(modelHeld)}`);
    const waiting = ids(queue);
    const modelWaiting = this.requests.filter((req) => req.model.state === 'queued').map((req) => req.id);
    this.check(isDeepStrictEqual(waiting, modelWaiting), () => `queue ${JSON.stringify(waiting)}, the model's ${JSON.stringify(modelWaiting)}`);
    const model = this.model.status();
    this.check(model.active === permits.length && model.queue_length === queue.length, () => `model status ${JSON.stringify(model)}`);
    // spec 01 §11 on the tables: 1 (limits), 5 (no eligible request waits below the global limit), 4 (FIFO per agent)
    const activeOf = (agent: string) => permits.filter((row) => row.agent_id === agent).length;
    this.check(permits.length <= (MODEL_CONFIG.globalLimit as number) && queue.length <= (MODEL_CONFIG.maxQueue as number), () => `${permits.length} permits, ${queue.length} queued`);
    for (const agent of AGENTS) this.check(activeOf(agent) <= limitOf(agent), () => `agent ${agent} holds ${activeOf(agent)} permits`);
    if (permits.length < (MODEL_CONFIG.globalLimit as number)) {
      for (const row of queue) this.check(activeOf(row.agent_id) >= limitOf(row.agent_id), () => `request of ${row.agent_id} waits with capacity free`);
    }
    for (const row of queue) {
      const waiter = this.byRef.get(row.request_id);
      const overtaken = this.requests.find((req) => waiter && req.agent === waiter.agent && req.id > waiter.id && req.cluster.submit === 'queued' && req.cluster.outcome === 'granted');
      this.check(overtaken === undefined, () => `#${overtaken?.id} was granted before the older #${waiter?.id} of its agent`);
    }
    for (const node of this.slots) this.check(node.cluster.instance.live, () => `the live ${node.name} lost its instance lock`);
    this.throwIfViolated();
  }

  /** Adds what this run reached to `tally` (printed with ADMISSION_MODEL_COVERAGE=1). */
  count(tally: Map<string, number>): void {
    for (const req of this.requests) {
      for (const key of [`submit ${req.model.submit}`, `wait ${req.model.outcome}`, `revoked ${req.model.revoked}`, `killed ${req.killed}`]) {
        if (!key.endsWith('undefined')) tally.set(key, (tally.get(key) ?? 0) + 1);
      }
    }
  }

  // ---- bookkeeping ---------------------------------------------------------------------------

  private lifetime(spec: LifetimeSpec, role: 'owner' | 'signal'): Lifetime | undefined {
    let lifetime: Lifetime | undefined;
    if (spec === 'new' || spec === 'newAborted') {
      lifetime = { index: this.lifetimes.length, controller: new AbortController(), asOwner: false, asSignal: false };
      this.lifetimes.push(lifetime);
      if (spec === 'newAborted') this.abort(lifetime);
    } else if (spec !== 'none') {
      // a signal still open: aborted ones come through 'newAborted'
      lifetime = this.pickOf(this.lifetimes.filter((each) => !each.controller.signal.aborted), spec.reuse);
    }
    if (lifetime && role === 'owner') lifetime.asOwner = true;
    if (lifetime && role === 'signal') lifetime.asSignal = true;
    return lifetime;
  }

  private pickOf<T>(candidates: readonly T[], index: number): T | undefined {
    return candidates.length === 0 ? undefined : candidates[index % candidates.length];
  }

  private check(condition: boolean, message: () => string): void {
    if (!condition) this.violations.push(`[${this.step}] ${message()}`);
  }

  private throwIfViolated(): void {
    if (this.violations.length > 0) throw new Error(`cluster and model differ:\n${this.violations.slice(0, 8).join('\n')}`);
  }
}

function timing(spec: TimingSpec, now: number): AdmissionRequestOptions {
  if (spec === 'default') return {};
  if ('timeoutMs' in spec) return { queueTimeoutMs: spec.timeoutMs };
  return { deadline: now + spec.halves / 2 };
}

describe('cluster admission against the single-instance model (spec 08 §6)', () => {
  const h = useHarness(() => openDatabaseHarness(), 'all');
  let runs = 0;
  const coverage = new Map<string, number>();
  afterAll(() => {
    if (process.env.ADMISSION_MODEL_COVERAGE) console.log([...coverage].sort().map(([key, n]) => `${key}: ${n}`).join('\n'));
  });

  it('three instances grant, queue, refuse and revoke as one AdmissionController would, through submits, releases, cancels, aborts, deadlines and kills', async () => {
    const parameters: fc.Parameters<[Cmd[]]> = {
      numRuns: RUNS,
      endOnFailure: process.env.ADMISSION_MODEL_SHRINK !== '1',
      ...(process.env.ADMISSION_MODEL_SEED ? { seed: Number(process.env.ADMISSION_MODEL_SEED), path: process.env.ADMISSION_MODEL_PATH } : {}),
    };
    await fc.assert(
      fc.asyncProperty(fc.array(commandArb, { minLength: 8, maxLength: MAX_COMMANDS, size: 'max' }), async (cmds) => {
        const run = new Run(h(), runs++);
        try {
          await run.start();
          for (const [i, cmd] of cmds.entries()) await run.command(cmd, i);
          await run.finish();
          run.count(coverage);
        } finally {
          await run.close();
        }
      }),
      parameters,
    );
  }, 240_000);
});
