import type { ConfirmationDecision } from '../agent.types';
import type { Content, JsonObject, JsonValue } from '../content.types';
import { restoreContinuation, takeContinuation } from '../durable/continuation-store';
import { pendingCallIds, type Continuation } from '../durable/continuations';
import { DurableRecord } from '../durable/durable-record';
import { completed, concludeLoop } from '../loop/final-output';
import { historyOf } from '../loop/history';
import type { InvocationBody } from './invocation-lifecycle';
import type { InvocationScope } from './invocation-scope';
import type { ToolCall } from '../models/model.types';
import { runAgentLoop } from '../loop/agent-loop';
import { RunnerError } from '../runner.errors';
import type { SessionEvent } from '../session.types';
import type { ToolTurn } from '../tools/tool-turn';

/** A validated resume: a confirmation decision for one call, or a durable recovery. */
export interface ResumePlan {
  readonly callId: string | undefined;
  readonly decision: ConfirmationDecision | undefined;
  /** The approver's principal id, recorded with the answered call. */
  readonly confirmedBy: string | undefined;
  readonly onAdmitted: InvocationBody['onAdmitted'];
}

/**
 * A resume (spec 03 §7, §8): the continuation is taken before admission and put back when admission
 * or the durable claim fails; then the paused turn is answered under the same invocation id and the
 * model loop goes on.
 */
export function resumeBody(scope: InvocationScope, plan: ResumePlan): InvocationBody {
  const { options } = scope;
  const service = options.sessionService;
  let continuation: Continuation | null = null;
  return {
    onAdmitted: plan.onAdmitted,
    beforeAdmission: async () => {
      if (plan.callId === undefined) {
        if (options.ledger === null) throw new RunnerError('invocation_not_found', {});
        return;
      }
      continuation = await scope.session('update_state', () => takeContinuation(service, scope.ref, scope.invocationId, plan.callId as string));
    },
    onStartFailed: async () => {
      if (continuation !== null) await restoreContinuation(service, scope.ref, continuation);
    },
    afterAdmission: async () => {
      const durable = plan.callId === undefined || continuation?.durable === true;
      if (!durable) return;
      if (options.ledger === null) throw new RunnerError('ledger_failed', { reason: 'ledger_not_configured' });
      scope.durable = await DurableRecord.reclaim(options.ledger, scope, plan.callId !== undefined);
    },
    run: async (hooksStarted) => {
      const session = await scope.session('get_session', () => service.getSession(scope.ref));
      if (session === undefined) throw new RunnerError('invocation_not_found', {});
      scope.useState(session.state);
      const events = await scope.session('list_events', () => service.listEvents(scope.ref));
      hooksStarted();
      const own = events.filter((event) => event.invocation_id === scope.invocationId);
      const final = own.find((event) => event.kind === 'final_output');
      if (final !== undefined) return completed(scope, final.content as unknown as Content);
      const history = historyOf(events, options.root.name);
      const turn = pausedTurn(scope, own, session.state, plan, continuation);
      if (turn === null && !own.some((event) => event.kind === 'user_message')) throw new RunnerError('invocation_not_found', {});
      return concludeLoop(scope, await runAgentLoop(scope, options.root, history, false, turn ?? undefined));
    },
  };
}

/** The last tool turn of the invocation and what is known of each of its calls. */
function pausedTurn(scope: InvocationScope, own: readonly SessionEvent[], state: JsonObject, plan: ResumePlan, continuation: Continuation | null): ToolTurn | null {
  const rootName = scope.options.root.name;
  let turnIndex = own.length - 1;
  while (turnIndex >= 0 && !(own[turnIndex].kind === 'model_turn' && own[turnIndex].author === rootName)) turnIndex -= 1;
  if (turnIndex < 0) return null;
  // the confirmed call runs with the arguments the human was asked about, even if a plugin redacted the stored turn
  const calls = (own[turnIndex].content as unknown as { tool_calls: readonly ToolCall[] }).tool_calls.map((call) =>
    continuation !== null && call.id === continuation.call_id ? { ...call, args: continuation.args } : call,
  );
  const answered = new Set(
    own
      .slice(turnIndex + 1)
      .filter((event) => event.kind === 'tool_response')
      .map((event) => (event.content as { call_id: string }).call_id),
  );
  const stillPending = pendingCallIds(state, scope.invocationId).filter((id) => id !== plan.callId && !answered.has(id));
  const recorded = new Map<string, JsonValue>();
  for (const [stepId, response] of scope.durable?.recordedSteps() ?? []) if (!answered.has(stepId)) recorded.set(stepId, response);
  return {
    calls,
    skip: new Set([...answered, ...stillPending]),
    stillPending,
    recorded,
    decisions: plan.callId === undefined || plan.decision === undefined ? new Map() : new Map([[plan.callId, plan.decision]]),
    ...(plan.confirmedBy === undefined ? {} : { confirmedBy: plan.confirmedBy }),
  };
}
