import { agentLimitOf } from '../admission-config';
import { applyReport, type AdaptiveState } from '../flow/adaptive-limit';
import type { ResolvedAdaptive } from '../flow/flow-config';
import { compareQueued, effectiveRank } from '../flow/fair-share';
import { settleCost } from '../flow/rate-buckets';
import { oversizeScope, refusalOf, takeTokens, type Refusal } from '../flow/scope-capacity';
import type { TransactionClient } from '../../database/transaction-runner';
import type { DecisionPlan, FlowReading, GrantedRow, ReportRecord, SettleRecord, SubmitDecision, SubmitPlan } from './admission-decisions';
import type { Tally } from './decision-tally';
import { GRANT_QUEUED, INSERT_FLOW_PERMIT, INSERT_FLOW_QUEUED, NEXT_HEAD } from './flow-sql';
import { DecisionFlowState, flowKey, headOf, type FlowHead } from './decision-flow-state';

/** What the flow-control part of a decision did. */
export interface FlowDecision {
  readonly grants: GrantedRow[];
  readonly submit: SubmitDecision | undefined;
  readonly flow: FlowReading;
}

/**
 * The dispatch and submit of one decision under flow control (spec 09 §9), after the opening and in
 * its transaction: reads the flow state, applies this instance's settles and reports, grants flow
 * heads while some has capacity (by the pure cores the local controller uses too: `refusalOf`,
 * `effectiveRank`, `compareQueued`, the tags), decides the new request and writes the state back.
 * `saturation` holds what the permit rows said of reports whose grant the instance did not see.
 */
export async function decideFlow(client: TransactionClient, plan: DecisionPlan, tally: Tally, saturation: ReadonlyMap<string, boolean> | undefined): Promise<FlowDecision> {
  const state = new DecisionFlowState(plan.config, tally);
  await state.load(client, plan.wallNow());
  applySettles(state, plan.settles ?? []);
  applyReports(state, plan.reports ?? [], saturation);
  const refusals = new Map<string, Refusal>();
  const grants = await dispatch(client, state, refusals);
  const submit = plan.submit && (await decideSubmit(client, plan, plan.submit, state, refusals));
  let wakeAfterMs = Infinity;
  for (const refusal of refusals.values()) if (refusal.kind === 'rate') wakeAfterMs = Math.min(wakeAfterMs, refusal.retryAfterMs);
  await state.save(client);
  return { grants, submit, flow: reading(state, wakeAfterMs) };
}

function applySettles(state: DecisionFlowState, settles: readonly SettleRecord[]): void {
  for (const settle of settles) {
    for (const [limits, usage] of state.scopesOf(settle.agentId, settle.tenant)) {
      if (limits.rate !== undefined && usage.buckets !== undefined) settleCost(limits.rate, usage.buckets, settle.estimated, settle.actual);
    }
  }
}

function applyReports(state: DecisionFlowState, reports: readonly ReportRecord[], saturation: ReadonlyMap<string, boolean> | undefined): void {
  for (const record of reports) {
    const adaptive = state.adaptiveOf(record.agentId);
    if (adaptive === undefined) continue;
    const saturated = record.saturated ?? saturation?.get(record.requestRef) ?? false;
    const settings = state.flow.adaptive.get(record.agentId) as ResolvedAdaptive;
    applyReport(adaptive, settings, agentLimitOf(state.config, record.agentId), record.report, saturated, record.at);
    state.markAdaptive(record.agentId);
  }
}

/**
 * Grants, again and again, the flow head with capacity that comes first (effective class, start tag,
 * sequence); only heads compete, so order within a flow stays FIFO. `refusals` ends up holding why
 * each remaining head waits.
 */
async function dispatch(client: TransactionClient, state: DecisionFlowState, refusals: Map<string, Refusal>): Promise<GrantedRow[]> {
  const grants: GrantedRow[] = [];
  for (;;) {
    refusals.clear();
    let best: FlowHead | undefined;
    let bestRank = 0;
    for (const [key, head] of state.heads) {
      const refusal = refusalOf(state.scopesOf(head.agentId, head.tenant), head.cost, state.nowMs);
      if (refusal !== undefined) {
        refusals.set(key, refusal);
        continue;
      }
      const rank = effectiveRank(head.rank, state.nowMs - head.enqueuedAt, state.flow.priorityAgingMs);
      if (best === undefined || compareQueued(rank, head.start, head.seq, bestRank, best.start, best.seq) < 0) {
        best = head;
        bestRank = rank;
      }
    }
    if (best === undefined) return grants;
    grants.push(await grantHead(client, state, best));
  }
}

async function grantHead(client: TransactionClient, state: DecisionFlowState, head: FlowHead): Promise<GrantedRow> {
  const { agentId, tenant } = head;
  const saturated = isSaturated(state, agentId);
  takeTokens(state.scopesOf(agentId, tenant), head.cost);
  await client.query(GRANT_QUEUED, [head.requestId, saturated]);
  state.tally.grantQueued(agentId);
  state.use(agentId, tenant, 1, -1, head.cost);
  state.advance(head.start);
  const key = flowKey(agentId, tenant);
  const left = (state.flowQueued.get(key) ?? 1) - 1;
  state.flowQueued.set(key, left);
  state.heads.delete(key);
  if (left > 0) {
    const { rows } = await client.query(NEXT_HEAD, [agentId, tenant ?? null]);
    if (rows[0] !== undefined) state.heads.set(key, headOf(rows[0] as Record<string, unknown>));
  }
  return { requestId: head.requestId, agentId, instanceId: head.instanceId, activeAfter: state.tally.active, queuedAfter: state.tally.queued, saturated };
}

/** Whether the agent holds at least its effective limit once this grant counts (the AIMD reading of saturation). */
function isSaturated(state: DecisionFlowState, agentId: string): boolean {
  return state.flow.adaptive.has(agentId) && state.tally.of(agentId).active + 1 >= state.limitOf(agentId);
}

/**
 * Spec 09 §2 and §8 for the new request: granted only when its flow has nobody queued and every scope
 * has capacity; else refused (`reject`: the first refusing scope, a queued flow's head's reason) or queued with its tags.
 */
async function decideSubmit(client: TransactionClient, plan: DecisionPlan, submit: SubmitPlan, state: DecisionFlowState, refusals: Map<string, Refusal>): Promise<SubmitDecision> {
  const { agentId, tenant, cost } = submit;
  const key = flowKey(agentId, tenant);
  const scopes = state.scopesOf(agentId, tenant);
  // a cost no scope can ever hold is refused at submit whatever the overflow (spec 09 §2)
  const oversize = oversizeScope(scopes, cost);
  if (oversize !== undefined) return { kind: 'rejected', scope: oversize, limitKind: 'cost' };
  const behind = (state.flowQueued.get(key) ?? 0) > 0;
  const refusal = behind ? (refusals.get(key) ?? { kind: 'count', scope: 'agent' }) : refusalOf(scopes, cost, state.nowMs);
  if (refusal === undefined) {
    const saturated = isSaturated(state, agentId);
    takeTokens(scopes, cost);
    state.advance(state.tag(agentId, tenant, cost));
    await client.query(INSERT_FLOW_PERMIT, [submit.permitId, submit.ref, agentId, plan.instanceId, tenant ?? null, cost, saturated]);
    state.tally.add(agentId, 1, 0);
    state.use(agentId, tenant, 1, 0, cost);
    return { kind: 'granted', saturated };
  }
  if (submit.overflow === 'reject') {
    if (refusal.kind === 'rate') return { kind: 'rate_limited', scope: refusal.scope, retryAfterMs: refusal.retryAfterMs };
    return refusal.kind === 'cost' ? { kind: 'rejected', scope: refusal.scope, limitKind: 'cost' } : { kind: 'rejected', scope: refusal.scope };
  }
  if (state.tally.queued >= plan.config.maxQueue) return { kind: 'queue_full' };
  const now = plan.now();
  if (submit.deadline <= now) return { kind: 'expired' };
  const remainingMs = submit.deadline === Infinity ? null : submit.deadline - now;
  const start = state.tag(agentId, tenant, cost);
  const { rows } = await client.query(INSERT_FLOW_QUEUED, [submit.ref, submit.permitId, agentId, plan.instanceId, remainingMs, tenant ?? null, cost, submit.rank, start, state.nowMs - (now - submit.submittedAt)]);
  const seq = Number((rows[0] as { seq: string | number }).seq);
  state.tally.add(agentId, 0, 1);
  state.use(agentId, tenant, 0, 1, 0);
  state.flowQueued.set(key, (state.flowQueued.get(key) ?? 0) + 1);
  if (!behind) refusals.set(key, refusal);
  return { kind: 'queued', seq };
}

function reading(state: DecisionFlowState, wakeAfterMs: number): FlowReading {
  const agents = new Map<string, { cost: number; adaptive: AdaptiveState | undefined }>();
  for (const [agentId] of state.tally.counts(0).perAgent) {
    const adaptive = state.adaptiveOf(agentId);
    agents.set(agentId, { cost: state.agentCost.get(agentId) ?? 0, adaptive: adaptive && { ...adaptive } });
  }
  return { costInUse: state.globalCost, agents, tenants: state.tenantCounts(), wakeAfterMs };
}
