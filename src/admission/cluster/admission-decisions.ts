import type { OverflowMode, ResolvedAdmissionConfig } from '../admission-config';
import type { TenantCounts } from '../requests/admission-effects';
import type { AdaptiveState, WorkReport } from '../flow/adaptive-limit';
import type { LimitScope } from '../flow/flow-config';
import type { AdmissionOutcome } from '../admission.types';
import { AdmissionError } from '../admission.errors';
import type { PostgresFailure } from '../../database/postgres-failure';
import type { PgPool } from '../../database/postgres-pool';
import { runTransaction, type TransactionClient } from '../../database/transaction-runner';
import {
  ADMISSION_DECISION_LOCK_KEY,
  GRANT_OLDEST,
  INSERT_PERMIT,
  INSERT_QUEUED,
  LOCK_DECISIONS,
  NOTIFY_INSTANCES,
  OPEN_DECISION,
} from './admission-sql';
import { Tally, type AgentCounts } from './decision-tally';
import { decideFlow } from './flow-decision';
import { SELECT_SATURATED } from './flow-sql';

export type { AgentCounts };

/** Bound of every statement of a decision, the wait for the lock included. */
const DECISION_STATEMENT_TIMEOUT_MS = 5000;

/** The cluster as a decision left it. */
export interface ClusterCounts {
  readonly active: number;
  readonly queued: number;
  readonly perAgent: ReadonlyMap<string, Readonly<AgentCounts>>;
  readonly instancesLive: number;
}

/** A new request of this instance, decided after the dispatch. */
export interface SubmitPlan {
  readonly ref: string;
  readonly permitId: string;
  readonly agentId: string;
  readonly overflow: OverflowMode;
  /** Absolute monotonic ms; `Infinity` for none. */
  readonly deadline: number;
  /** Spec 09 §1 (read only with flow control). */
  readonly tenant: string | undefined;
  readonly cost: number;
  readonly rank: number;
  /** Monotonic ms of the submit: a queued request ages from then (spec 09 §4). */
  readonly submittedAt: number;
}

/** A `permit.settle` recorded on an instance, applied by its next decision (spec 09 §9). */
export interface SettleRecord {
  readonly agentId: string;
  readonly tenant: string | undefined;
  readonly estimated: number;
  readonly actual: number;
}

/** A `permit.report` recorded on an instance; `saturated` unknown when the instance did not see the grant's answer. */
export interface ReportRecord {
  readonly requestRef: string;
  readonly agentId: string;
  readonly report: WorkReport;
  readonly saturated: boolean | undefined;
  /** Wall-clock ms of the report: the decrease interval is judged by it. */
  readonly at: number;
}

/** What one decision does besides reaping, counting and dispatching. */
export interface DecisionPlan {
  readonly instanceId: string;
  readonly config: ResolvedAdmissionConfig;
  /** This instance's requests to delete, queued or granted. */
  readonly retire: readonly string[];
  /** Delete every row of this instance (its last decision, at stop). */
  readonly retireAll?: boolean;
  /** This instance's requests to look up: which hold a permit, which still wait. */
  readonly lookUp: readonly string[];
  readonly submit?: SubmitPlan;
  /** Settles and reports recorded on this instance since its last decision (flow control only). */
  readonly settles?: readonly SettleRecord[];
  readonly reports?: readonly ReportRecord[];
  /** The monotonic clock the submit's deadline is judged on. */
  readonly now: () => number;
  /** The wall clock of flow control: rate buckets and aging (spec 09 §9). */
  readonly wallNow: () => number;
}

/** How the submit of a plan was decided. */
export type SubmitDecision =
  | { readonly kind: 'granted'; readonly saturated?: boolean }
  | { readonly kind: 'queued'; readonly seq: number }
  | { readonly kind: 'rejected'; readonly scope: LimitScope; readonly limitKind?: 'cost' }
  | { readonly kind: 'rate_limited'; readonly scope: LimitScope; readonly retryAfterMs: number }
  | { readonly kind: 'queue_full' }
  | { readonly kind: 'expired' };

/** A queued request granted by the dispatch of a decision. */
export interface GrantedRow {
  readonly requestId: string;
  readonly agentId: string;
  readonly instanceId: string;
  /** Cluster totals right after this grant (telemetry reports each transition's own totals). */
  readonly activeAfter: number;
  readonly queuedAfter: number;
  /** Flow control: the agent held at least its effective limit when this was granted (spec 09 §8). */
  readonly saturated?: boolean;
}

/** What a flow-control decision read and left (spec 09 §7 status, §5 rate wake-up). */
export interface FlowReading {
  readonly costInUse: number;
  /** Cost held and AIMD state (adaptive agents only) of the agents with work. */
  readonly agents: ReadonlyMap<string, { readonly cost: number; readonly adaptive: Readonly<AdaptiveState> | undefined }>;
  readonly tenants: readonly TenantCounts[];
  /** Ms until the earliest queued request may become rate-eligible; `Infinity` for none. */
  readonly wakeAfterMs: number;
}

/** What a committed decision did and saw. */
export interface DecisionOutcome {
  readonly submit: SubmitDecision | undefined;
  readonly grants: readonly GrantedRow[];
  /** Requests of `lookUp` holding a permit. */
  readonly held: ReadonlySet<string>;
  /** Requests of `lookUp` still queued. */
  readonly waiting: ReadonlySet<string>;
  readonly counts: ClusterCounts;
  /** With flow control only. */
  readonly flow?: FlowReading;
}

/** The error a submit throws and the outcome it reports for a refusal of the cluster (spec 01 §5.1 steps 6–7). */
export function refusalOf(decision: SubmitDecision, maxQueue: number): [AdmissionError, AdmissionOutcome] {
  switch (decision.kind) {
    case 'rejected':
      return [new AdmissionError('concurrency_limit_reached', decision.limitKind ? { limit_scope: decision.scope, limit_kind: decision.limitKind } : { limit_scope: decision.scope }), 'rejected'];
    case 'rate_limited':
      return [new AdmissionError('rate_limited', { limit_scope: decision.scope, retry_after_ms: decision.retryAfterMs }), 'rate_limited'];
    case 'queue_full':
      return [new AdmissionError('admission_queue_full', { max_queue: maxQueue }), 'queue_full'];
    default:
      return [new AdmissionError('queue_deadline_exceeded'), 'expired'];
  }
}

/** The admission reading of a database failure: `admission_store_unavailable` with codes only. */
export function storeUnavailable(failure: PostgresFailure): AdmissionError {
  return new AdmissionError('admission_store_unavailable', { ...failure.codes });
}

/**
 * One admission decision of the cluster (spec 08 §3), in one transaction under the decision lock:
 * reap dead instances, retire this instance's gone requests, count, grant the oldest eligible queued
 * requests while capacity lasts, decide the new request, and notify every other instance that
 * received a grant. Fails with `admission_store_unavailable`; then nothing of it was committed.
 */
export function runDecision(pool: PgPool, plan: DecisionPlan): Promise<DecisionOutcome> {
  return runTransaction(pool, (client) => decide(client, plan), storeUnavailable, { statementTimeoutMs: DECISION_STATEMENT_TIMEOUT_MS });
}

async function decide(client: TransactionClient, plan: DecisionPlan): Promise<DecisionOutcome> {
  await client.query(LOCK_DECISIONS, [ADMISSION_DECISION_LOCK_KEY]);
  // read before the opening deletes the permits of reports made after a release
  const saturation = plan.config.flowControl ? await readSaturation(client, plan.reports ?? []) : undefined;
  const { rows } = await client.query(OPEN_DECISION, [plan.instanceId, plan.retire, plan.lookUp, plan.retireAll === true]);
  const opened = rows[0] as { agents: Array<[string, number, number]>; held: string[]; waiting: string[]; instances_live: number };
  const tally = new Tally(plan.config, opened.agents);
  let grants: GrantedRow[];
  let submit: SubmitDecision | undefined;
  let flow: FlowReading | undefined;
  if (plan.config.flowControl) {
    ({ grants, submit, flow } = await decideFlow(client, plan, tally, saturation));
  } else {
    grants = await dispatch(client, tally);
    submit = plan.submit && (await decideSubmit(client, plan, plan.submit, tally));
  }
  const notified = [...new Set(grants.map((grant) => grant.instanceId))].filter((id) => id !== plan.instanceId);
  if (notified.length > 0) await client.query(NOTIFY_INSTANCES, [notified]);
  return { submit, grants, held: new Set(opened.held), waiting: new Set(opened.waiting), counts: tally.counts(opened.instances_live), ...(flow ? { flow } : {}) };
}

/** Saturation of the reported permits whose grant this instance did not see (false once the row is gone). */
async function readSaturation(client: TransactionClient, reports: readonly ReportRecord[]): Promise<Map<string, boolean>> {
  const unknown = reports.filter((report) => report.saturated === undefined).map((report) => report.requestRef);
  const known = new Map<string, boolean>();
  if (unknown.length === 0) return known;
  const { rows } = await client.query(SELECT_SATURATED, [unknown]);
  for (const row of rows as Array<{ request_id: string; saturated: boolean }>) known.set(row.request_id, row.saturated);
  return known;
}

/** Grants the oldest queued request whose agent has spare capacity, again and again, while global capacity lasts. */
async function dispatch(client: TransactionClient, tally: Tally): Promise<GrantedRow[]> {
  const grants: GrantedRow[] = [];
  while (tally.active < tally.config.globalLimit) {
    const eligible = tally.eligibleAgents();
    if (eligible.length === 0) break;
    const { rows } = await client.query(GRANT_OLDEST, [eligible]);
    const row = rows[0] as { request_id: string; agent_id: string; instance_id: string } | undefined;
    if (row === undefined) break;
    tally.grantQueued(row.agent_id);
    grants.push({ requestId: row.request_id, agentId: row.agent_id, instanceId: row.instance_id, activeAfter: tally.active, queuedAfter: tally.queued });
  }
  return grants;
}

/** Spec 01 §5.1 steps 5–7 over the cluster's counts. */
async function decideSubmit(client: TransactionClient, plan: DecisionPlan, submit: SubmitPlan, tally: Tally): Promise<SubmitDecision> {
  const agent = tally.of(submit.agentId);
  const agentLimit = tally.limitOf(submit.agentId);
  if (tally.active < plan.config.globalLimit && agent.active < agentLimit) {
    await client.query(INSERT_PERMIT, [submit.permitId, submit.ref, submit.agentId, plan.instanceId]);
    tally.add(submit.agentId, 1, 0);
    return { kind: 'granted' };
  }
  if (submit.overflow === 'reject') return { kind: 'rejected', scope: agent.active >= agentLimit ? 'agent' : 'global' };
  if (tally.queued >= plan.config.maxQueue) return { kind: 'queue_full' };
  const now = plan.now();
  if (submit.deadline <= now) return { kind: 'expired' };
  const remainingMs = submit.deadline === Infinity ? null : submit.deadline - now;
  const { rows } = await client.query(INSERT_QUEUED, [submit.ref, submit.permitId, submit.agentId, plan.instanceId, remainingMs]);
  tally.add(submit.agentId, 0, 1);
  return { kind: 'queued', seq: Number((rows[0] as { seq: string | number }).seq) };
}
