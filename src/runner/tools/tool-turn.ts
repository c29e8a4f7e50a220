import { checkPolicy } from '../loop/policy-gate';
import { handled } from '../../shared/async/handled-promise';
import type { ConfirmationDecision } from '../agent.types';
import type { CompiledAgent } from '../loop/agent-tree';
import type { JsonObject, JsonValue } from '../content.types';
import { saveContinuations } from '../durable/continuation-store';
import type { Continuation } from '../durable/continuations';
import { applyEventCallbacks, denialRecord, draftEvent, recordDenial, storeEvent } from '../loop/event-recorder';
import type { InvocationScope } from '../invocation/invocation-scope';
import type { HistoryEntry, ToolCall } from '../models/model.types';
import { toolTraceNames, traceRunner } from '../tracing/runner-trace';
import type { ToolSpan } from '../tracing/run-tracer';
import { prepareCall, runCall, type CallResult, type PendingCall, type ToolCallOutcome } from './tool-call-step';

/** One tool turn to answer: its calls in model order, and what a resume already knows about them. */
export interface ToolTurn {
  readonly calls: readonly ToolCall[];
  /** Human decisions by call id (a resume). */
  readonly decisions?: ReadonlyMap<string, ConfirmationDecision>;
  /** The principal id of whoever made those decisions, recorded with each answered call. */
  readonly confirmedBy?: string;
  /** Responses a durable checkpoint recorded, replayed instead of re-run. */
  readonly recorded?: ReadonlyMap<string, JsonValue>;
  /** Calls already answered in the session, or still awaiting another decision. */
  readonly skip?: ReadonlySet<string>;
  /** Calls of the turn still awaiting a decision from an earlier pause. */
  readonly stillPending?: readonly string[];
}

interface Commit {
  readonly call: ToolCall;
  /** Whether the call's name is one of the agent's tools (see `AnsweredCall.declared`). */
  readonly declared: boolean;
  /** The approver of a call answered by a human's decision (see `ToolTurn.confirmedBy`). */
  readonly confirmedBy: string | undefined;
  readonly work: Promise<CallResult>;
  readonly span: ToolSpan;
}

/**
 * Answers the calls of one tool turn (spec 03 §6.4–6.10): each is prepared in model order; allowed
 * calls run (concurrently with `parallelToolCalls`, a denied or invalid call being a barrier) and
 * every response, with its audit event first, is committed in model order. Calls awaiting
 * confirmation end the turn paused: their ids are returned, in model order.
 */
export async function answerToolTurn(scope: InvocationScope, agent: CompiledAgent, history: HistoryEntry[], turn: ToolTurn, isSubAgent: boolean): Promise<string[]> {
  const pending: PendingCall[] = [];
  let batch: Commit[] = [];
  const flush = async () => {
    const results = await Promise.all(batch.map((entry) => entry.work));
    const committed = batch;
    batch = [];
    for (let index = 0; index < committed.length; index += 1) {
      const { response, denial, outcome } = results[index];
      if (denial !== undefined) await recordDenial(scope, denial);
      const { call, declared, confirmedBy, span } = committed[index];
      await commitResponse(scope, agent, history, { call, declared, confirmedBy }, response, outcome, isSubAgent, span);
    }
  };
  for (const call of turn.calls) {
    if (turn.skip?.has(call.id)) continue;
    const recorded = turn.recorded?.get(call.id);
    if (recorded !== undefined) {
      await flush();
      await storeResponse(scope, agent, history, call, recorded);
      continue;
    }
    const span = scope.spans.startTool(agent.name);
    const decision = turn.decisions?.get(call.id);
    const confirmedBy = decision === undefined ? undefined : turn.confirmedBy;
    const prepared = await prepareCall(scope, agent, call, decision, isSubAgent, span, confirmedBy);
    if (prepared.kind === 'pending') {
      span.end('confirmation_requested');
      pending.push(prepared);
      continue;
    }
    if (prepared.kind === 'answer' && prepared.barrier) {
      await flush();
      if (prepared.denial !== undefined) await recordDenial(scope, prepared.denial);
      await commitResponse(scope, agent, history, { call, declared: prepared.declared, confirmedBy }, prepared.response, prepared.outcome, isSubAgent, span);
      continue;
    }
    const work = prepared.kind === 'answer' ? Promise.resolve({ response: prepared.response, outcome: prepared.outcome }) : handled(runCall(scope, agent, prepared, span));
    batch.push({ call, declared: prepared.kind === 'answer' ? prepared.declared : true, confirmedBy, work, span });
    if (agent.agent.parallelToolCalls !== true) await flush();
  }
  await flush();
  if (pending.length > 0) await requestConfirmations(scope, agent, pending);
  const waiting = new Set([...(turn.stillPending ?? []), ...pending.map((entry) => entry.call.id)]);
  return turn.calls.filter((call) => waiting.has(call.id)).map((call) => call.id);
}

/**
 * Step 8 for one response: `onEventCallback`, the tool-result check, the store, the checkpoint. The
 * response to a human's decision carries the approver's id as `confirmed_by` (never seen by the model).
 */
async function commitResponse(
  scope: InvocationScope,
  agent: CompiledAgent,
  history: HistoryEntry[],
  { call, declared, confirmedBy }: Pick<Commit, 'call' | 'declared' | 'confirmedBy'>,
  response: JsonValue,
  outcome: ToolCallOutcome,
  isSubAgent: boolean,
  span: ToolSpan,
): Promise<void> {
  let event = await applyEventCallbacks(scope, agent.name, draftEvent(scope, 'tool', 'tool_response', responseContent(call, response, confirmedBy)));
  const content = event.content as JsonObject;
  const policy = scope.options.policy;
  if (policy !== null) {
    const checked = checkPolicy(scope, 'content', 'tool_result', content.response, agent.name);
    span.policy('content', checked);
    if (checked !== null) {
      await recordDenial(scope, checked);
      event = { ...event, content: { ...content, response: denialRecord(checked) } };
      outcome = 'denied';
    }
  }
  const stored = await storeEvent(scope, event);
  const storedResponse = (stored.content as JsonObject).response;
  history.push({ role: 'tool', callId: call.id, name: call.name, response: storedResponse });
  scope.toolCalls += 1;
  traceRunner(scope, 'runner.tool.call', { agent: agent.name, ...toolTraceNames(call.name, declared), call_id: call.id, attributes: { outcome } });
  span.end(outcome, storedResponse);
  if (!isSubAgent && scope.durable !== null) await scope.durable.stepCompleted({ step_id: call.id, tool_name: call.name, response: storedResponse });
}

function responseContent(call: ToolCall, response: JsonValue, confirmedBy: string | undefined): JsonObject {
  return confirmedBy === undefined ? { call_id: call.id, tool: call.name, response } : { call_id: call.id, tool: call.name, response, confirmed_by: confirmedBy };
}

/** A response the checkpoint recorded: stored as it was, never re-run or re-checked. */
async function storeResponse(scope: InvocationScope, agent: CompiledAgent, history: HistoryEntry[], call: ToolCall, response: JsonValue): Promise<void> {
  await storeEvent(scope, draftEvent(scope, 'tool', 'tool_response', { call_id: call.id, tool: call.name, response }));
  history.push({ role: 'tool', callId: call.id, name: call.name, response });
}

/** One `confirmation_requested` event per pending call, then their continuations in the session state (spec 03 §7). */
async function requestConfirmations(scope: InvocationScope, agent: CompiledAgent, pending: readonly PendingCall[]): Promise<void> {
  for (const { call, hint } of pending) {
    traceRunner(scope, 'runner.tool.call', { agent: agent.name, tool: call.name, call_id: call.id, attributes: { outcome: 'confirmation_requested' } });
    const content: JsonObject = hint === undefined ? { call_id: call.id, tool: call.name, args: call.args } : { call_id: call.id, tool: call.name, args: call.args, hint };
    await storeEvent(scope, await applyEventCallbacks(scope, agent.name, draftEvent(scope, 'runner', 'confirmation_requested', content)));
  }
  const continuations: Continuation[] = pending.map(({ call }) => ({
    invocation_id: scope.invocationId,
    call_id: call.id,
    tool: call.name,
    args: call.args,
    agent: agent.name,
    durable: scope.durable !== null,
  }));
  const state = await scope.session('update_state', () => saveContinuations(scope.options.sessionService, scope.ref, continuations));
  scope.useState(state);
}
