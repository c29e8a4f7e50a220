/**
 * What the cluster-versus-model property (spec 08 §6) observes: the clocks of the instances, what a
 * caller saw of each request on either side, and the documented differences between three
 * `ClusterAdmissionController` instances and one process-local `AdmissionController` (the model).
 *
 * MODEL DIFFERENCES, each encoded where the property compares:
 * 1. Kill. Killing an instance (its lock session terminated, or its `ClusterInstance` stopped) is, in
 *    the model, the owner abort of every request the instance owns. Its permits are revoked with
 *    `owner_down` on both sides; its queued requests fail with `owner_down` in the model but with
 *    `admission_store_unavailable` on the cluster (the controller's reading of "my lock is gone: the
 *    cluster takes this instance for dead"). Telemetry is `owner_down` on both.
 * 2. The revocation is not immediate. The killed instance fails its queued requests when it sees its
 *    lock gone, and revokes its permits when its lock grace runs out on its own clock; its peers'
 *    periodic reap only marks it dead (they may reap its rows after grace plus margin, which a run never
 *    reaches: the zombie deletes its rows itself once revoked). The property fires the live instances'
 *    reap, moves the zombie's clock alone past its grace, and compares once the cluster is quiescent;
 *    nothing forces the zombie to poll.
 * 3. Order of one abort's removals. One abort of a shared owner, or a kill, removes several requests.
 *    Every instance removes the queued ones at once (locally, before any decision) and revokes the
 *    permits through decisions afterwards, an instance's share in one decision, several instances in
 *    lock order. The model removes requests one by one in listener order and dispatches after each, so
 *    it could grant a queued request on one revocation and revoke it again at once, where the cluster
 *    fails it while queued. The property therefore aborts the model's owners in the cluster's order:
 *    queued requests first, then permits. The rest of the order does not change the end state (greedy
 *    dispatch of the oldest eligible request), and the sides are compared only once the cluster is
 *    quiescent.
 * 4. Owner-clock-only deadlines. A queued request's deadline is judged on the clock of the instance that
 *    owns it (the database's `deadline_at` is for operators). Every instance here has its own monotonic
 *    base (a {@link NodeClock} offset); durations are the model's, so the sides agree.
 * 5. Cluster status is the cluster as last read by this instance's decisions. It is compared with the
 *    model's only after every live instance has run a periodic reap; telemetry `active`/`queued` totals
 *    are such readings too, so telemetry is compared as outcomes per agent only.
 * 6. A killed instance refuses new submits with `admission_store_unavailable`; the model has no such
 *    state (the property gives the slot a fresh instance, as an orchestrator would).
 */
import { isDeepStrictEqual } from 'node:util';
import { AdmissionError } from '../../src/admission/admission.errors';
import type { AdmissionConfig } from '../../src/admission/admission-config';
import type { AdmissionService } from '../../src/admission/admission-service';
import type { SubmitResult } from '../../src/admission/admission.types';
import type { Permit } from '../../src/admission/permit';
import { poolOf } from '../../src/database/postgres-pool';
import type { Clock } from '../../src/shared/time/clock';
import type { ManualClock } from '../../src/shared/time/manual-clock';
import type { DatabaseHarness } from '../support/database-harness';
import { tick, type ClusterNode } from './admission-fixture';

export const AGENTS = ['a', 'b', 'c'] as const;

/** Small limits so every rule is reached in a few commands: agent `c` takes one request at a time. */
export const MODEL_CONFIG: AdmissionConfig = Object.freeze({
  globalLimit: 3,
  defaultAgentLimit: 2,
  agentLimits: { c: 1 },
  overflow: 'queue',
  maxQueue: 4,
  defaultQueueTimeoutMs: 'infinity',
});

export const limitOf = (agent: string): number => (agent === 'c' ? 1 : 2);

/** The instances' reap period: no advance of the property reaches it, so a reap runs only when the test fires it. */
export const REAP_INTERVAL_MS = 3_600_000;

/**
 * One instance's clock: the shared manual time on its own monotonic base, and its periodic reap held
 * back until the test fires it (recognised by its delay, which nothing else uses).
 */
export class NodeClock implements Clock {
  private poll: { fn: () => void } | undefined = undefined;
  /** How far this instance's clock has run ahead of the shared time ({@link jump}). */
  private ahead = 0;
  private readonly timers = new Map<object, { readonly due: number; readonly fn: () => void; shared: unknown }>();

  constructor(
    private readonly shared: ManualClock,
    private readonly offset: number,
  ) {}

  monotonicNow(): number {
    return this.shared.monotonicNow() + this.offset + this.ahead;
  }

  wallNow(): number {
    return this.shared.wallNow();
  }

  setTimer(fn: () => void, ms: number): unknown {
    if (ms === REAP_INTERVAL_MS) {
      this.poll = { fn };
      return this.poll;
    }
    const handle = {};
    const timer = { due: this.monotonicNow() + ms, fn, shared: undefined as unknown };
    timer.shared = this.shared.setTimer(() => {
      this.timers.delete(handle);
      fn();
    }, ms);
    this.timers.set(handle, timer);
    return handle;
  }

  clearTimer(handle: unknown): void {
    if (handle === this.poll) this.poll = undefined;
    const timer = this.timers.get(handle as object);
    if (timer === undefined) return;
    this.timers.delete(handle as object);
    this.shared.clearTimer(timer.shared);
  }

  /**
   * Moves this instance's clock alone `ms` ahead (the others and the model stay), firing its timers now
   * due in order: how the property lets a zombie's lock grace run out by the zombie's own clock.
   */
  jump(ms: number): void {
    this.ahead += ms;
    const due = [...this.timers].filter(([, timer]) => timer.due <= this.monotonicNow()).sort(([, x], [, y]) => x.due - y.due);
    for (const [handle, timer] of due) {
      if (!this.timers.has(handle)) continue;
      this.clearTimer(handle);
      timer.fn();
    }
  }

  /** The controller re-arms its reap once the previous one has finished. */
  get pollArmed(): boolean {
    return this.poll !== undefined;
  }

  /** Runs the periodic reap now; false when none is armed. */
  firePoll(): boolean {
    const poll = this.poll;
    if (poll === undefined) return false;
    this.poll = undefined;
    poll.fn();
    return true;
  }
}

export type ObservedState = 'queued' | 'active' | 'done';

/**
 * What a caller saw of one request on one side: the submit's answer, the outcome of waiting for a
 * queued request, and the revocation of its permit. Errors are kept as labels (`label`).
 */
export class Observed {
  ref: string | undefined = undefined;
  submit: string | undefined = undefined;
  permit: Permit | undefined = undefined;
  /** How the wait of a queued request ended: `granted` or an error label. */
  outcome: string | undefined = undefined;
  revoked: string | undefined = undefined;
  revocations = 0;
  outcomes = 0;

  constructor(private readonly label: (error: unknown) => string) {}

  get state(): ObservedState {
    if (this.submit === 'queued' && this.outcome === undefined) return 'queued';
    if (this.permit !== undefined && this.revocations === 0) return 'active';
    return 'done';
  }

  /** Records what `submit` answered; a queued request is then awaited on `service`. */
  submitted(result: SubmitResult, service: AdmissionService): void {
    this.ref = result.requestRef;
    this.submit = result.status;
    if (result.status === 'granted') this.granted(result.permit);
    else
      service.await(result.requestRef).then(
        (permit) => this.settle('granted', permit),
        (error: unknown) => this.settle(this.label(error)),
      );
  }

  refused(error: unknown): void {
    this.submit = this.label(error);
  }

  /** The comparable part: equal on both sides unless a documented difference says otherwise. */
  summary(): Record<string, unknown> {
    return { submit: this.submit, outcome: this.outcome, state: this.state, revoked: this.revoked, revocations: this.revocations, outcomes: this.outcomes };
  }

  private settle(outcome: string, permit?: Permit): void {
    this.outcomes++;
    this.outcome ??= outcome;
    if (permit) this.granted(permit);
  }

  private granted(permit: Permit): void {
    this.permit = permit;
    const onRevoke = () => {
      this.revocations++;
      const reason = permit.signal.reason as AdmissionError;
      this.revoked = String(reason.details?.outcome);
    };
    if (permit.signal.aborted) onRevoke();
    else permit.signal.addEventListener('abort', onRevoke, { once: true });
  }
}

/** `'<code>'` for an AdmissionError, `'reason of lifetime <n>'` for an abort reason of the test's signals. */
export function errorLabel(reasons: ReadonlyMap<unknown, number>): (error: unknown) => string {
  return (error) => {
    if (error instanceof AdmissionError) return error.code;
    const lifetime = reasons.get(error);
    return lifetime === undefined ? `unexpected ${String(error)}` : `reason of lifetime ${lifetime}`;
  };
}

/** One cluster instance of a run: the property fires its periodic reap through `clock`. */
export interface ModelNode {
  readonly name: string;
  readonly clock: NodeClock;
  readonly cluster: ClusterNode;
  alive: boolean;
}

const COUNT_ROWS = `SELECT instance_id, sum(p)::int AS permits, sum(q)::int AS queued FROM
  (SELECT instance_id, 1 AS p, 0 AS q FROM agent_runtime_admission_permits
   UNION ALL SELECT instance_id, 0, 1 FROM agent_runtime_admission_queue) AS rows
  GROUP BY instance_id ORDER BY instance_id`;

/**
 * Resolves once the cluster is quiescent: three polls in a row see no pool client checked out, every
 * instance's own counts equal to its rows (a grant not yet delivered, or a delete not yet landed,
 * differs), no row of an unknown instance and no new telemetry; then one macrotask delivers the
 * promise settlements.
 */
export async function quiescence(h: DatabaseHarness, nodes: readonly ModelNode[], timeoutMs = 45_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  let quiet = 0;
  let last = '';
  while (quiet < 3) {
    await new Promise((resolve) => setTimeout(resolve, 3));
    const rows = await h.sql<{ instance_id: string; permits: number; queued: number }>(COUNT_ROWS);
    const byInstance = new Map(rows.map((row) => [row.instance_id, { active: row.permits, queued: row.queued }]));
    const agree =
      rows.every((row) => nodes.some((node) => node.name === row.instance_id)) &&
      nodes.every((node) => isDeepStrictEqual(node.cluster.controller.status().instance, byInstance.get(node.name) ?? { active: 0, queued: 0 }));
    const busy = nodes.some((node) => {
      const pool = poolOf(node.cluster.dataSource) as unknown as { totalCount: number; idleCount: number; waitingCount: number };
      return pool.totalCount - pool.idleCount + pool.waitingCount > 0;
    });
    const key = JSON.stringify([rows, nodes.map((node) => node.cluster.events.length)]);
    quiet = agree && !busy && key === last ? quiet + 1 : 0;
    last = key;
    if (Date.now() > until) {
      const own = nodes.map((node) => ({ node: node.name, alive: node.alive, live: node.cluster.instance.live, own: node.cluster.controller.status().instance }));
      throw new Error(`the cluster did not settle (agree ${agree}, busy ${busy}): ${key} ${JSON.stringify(own)}`);
    }
  }
  await tick();
}
