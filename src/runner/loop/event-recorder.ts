import { frozenJsonCopy } from '../../json/json-copy';
import { summarizeDecision } from '../../policy/policy-decision';
import type { PolicyDecision } from '../../policy/runtime-policy.types';
import { isPlainObject } from '../../shared/options/plain-object';
import { randomId } from '../../shared/ids/random-id';
import type { EventReplacement } from '../agent.types';
import type { JsonObject, JsonValue } from '../content.types';
import { linksOf, runChain } from './hook-chain';
import { contentOrNull } from './message';
import type { InvocationScope } from '../invocation/invocation-scope';
import { RunnerError } from '../runner.errors';
import type { NewSessionEvent, SessionEvent, SessionEventKind } from '../session.types';

/** The fixed content of every audit event. */
export const AUDIT_EVENT_TEXT = 'Runtime policy denied an operation.';

/** A new event of this invocation, not yet through `onEventCallback`. */
export function draftEvent(scope: InvocationScope, author: string, kind: SessionEventKind, content: JsonValue): NewSessionEvent {
  return { event_id: randomId('evt-'), invocation_id: scope.invocationId, author, kind, content };
}

/**
 * Runs the `onEventCallback` chain on a non-audit event about to be stored (spec 03 §2): `content`
 * and `actions` may be replaced; on a `tool_response` only `content.response`.
 */
export async function applyEventCallbacks(scope: InvocationScope, agentName: string, draft: NewSessionEvent): Promise<NewSessionEvent> {
  const links = linksOf<{ ctx: unknown; event: NewSessionEvent }, EventReplacement>(scope.options.plugins, 'onEventCallback');
  if (links.length === 0) return draft;
  const produced = await runChain('on_event', links, { ctx: scope.context(agentName), event: frozenJsonCopy(draft) }, scope);
  if (produced === undefined) return draft;
  const replacement = readReplacement(produced.value);
  if (replacement === null) throw new RunnerError('plugin_failed', { hook: 'on_event', plugin: produced.owner });
  let content = draft.content;
  if (replacement.content !== undefined) {
    content =
      draft.kind === 'tool_response'
        ? { ...(draft.content as JsonObject), response: (replacement.content as JsonObject | null)?.response ?? (draft.content as JsonObject).response }
        : replacement.content;
    if (!keepsShape(draft, content)) throw new RunnerError('plugin_failed', { hook: 'on_event', plugin: produced.owner });
  }
  return { ...draft, content, ...(replacement.actions !== undefined ? { actions: replacement.actions } : {}) };
}

/**
 * A replaced content must still have its kind's shape, keeping the ids and names the Runner reads
 * back (history, resume): otherwise one bad return would break every later run of the session.
 */
function keepsShape(draft: NewSessionEvent, content: JsonValue): boolean {
  const before = draft.content as JsonObject;
  switch (draft.kind) {
    case 'user_message':
      return contentOrNull(content, 'user') !== null;
    case 'final_output':
      return contentOrNull(content, 'model') !== null;
    case 'model_turn': {
      if (!isPlainObject(content) || (content.text !== undefined && typeof content.text !== 'string') || !Array.isArray(content.tool_calls)) return false;
      const calls = content.tool_calls as readonly JsonObject[];
      const original = before.tool_calls as readonly JsonObject[];
      return calls.length === original.length && calls.every((call, index) => isPlainObject(call) && call.id === original[index].id && call.name === original[index].name);
    }
    case 'confirmation_requested':
      return isPlainObject(content) && content.call_id === before.call_id && content.tool === before.tool;
    default:
      return true;
  }
}

function readReplacement(value: unknown): EventReplacement | null {
  if (!isPlainObject(value) || Object.keys(value).some((key) => key !== 'content' && key !== 'actions')) return null;
  if (value.actions !== undefined && !isPlainObject(value.actions)) return null;
  try {
    return frozenJsonCopy(value) as EventReplacement;
  } catch {
    return null;
  }
}

/** Stores an event through the session service and streams it. */
export async function storeEvent(scope: InvocationScope, event: NewSessionEvent): Promise<SessionEvent> {
  const stored = await scope.session('append_event', () => scope.options.sessionService.appendEvent(scope.ref, event));
  scope.throwIfEnded();
  scope.channel.push(stored);
  return stored;
}

/**
 * Writes the one audit event of a deny decision (spec 03 §6.11): to the session directly (no
 * `onEventCallback`), then to the audit sink, then to the stream. Either write failing fails the
 * run with `runtime_policy_audit_persistence_failed {target}`.
 */
export async function recordDenial(scope: InvocationScope, decision: PolicyDecision): Promise<void> {
  scope.policyDenials += 1;
  const event: NewSessionEvent = {
    ...draftEvent(scope, 'system', 'policy_audit', AUDIT_EVENT_TEXT),
    actions: { runtime_policy_decision: decision as unknown as JsonValue },
  };
  scope.throwIfEnded();
  let stored: SessionEvent;
  try {
    stored = await scope.userCode('session.append_event', () => scope.options.sessionService.appendEvent(scope.ref, event));
  } catch {
    scope.throwIfEnded();
    throw new RunnerError('runtime_policy_audit_persistence_failed', { target: 'session' });
  }
  if (scope.options.auditSink !== null) {
    try {
      await scope.userCode('audit_sink.record', () => scope.options.auditSink?.record(decision));
    } catch {
      scope.throwIfEnded();
      throw new RunnerError('runtime_policy_audit_persistence_failed', { target: 'audit_sink' });
    }
  }
  scope.throwIfEnded();
  scope.channel.push(stored);
}

/** The model-visible denial record of a decision (spec 03 §6.11). */
export function denialRecord(decision: PolicyDecision): JsonValue {
  return { success: false, error: { kind: 'runtime_policy_denied', ...summarizeDecision(decision) } };
}

/** The error of a run that ended on a deny decision: the five-key summary. */
export function denialError(decision: PolicyDecision): RunnerError {
  return new RunnerError('runtime_policy_denied', { ...summarizeDecision(decision) });
}
