import { AUDIT_EVENT_TEXT } from '../../runner/loop/event-recorder';
import { RunnerError } from '../../runner/runner.errors';
import type { AuditSink } from '../../policy/audit-log/audit-sink';
import { screenCheck, type RuntimePolicy, type ScreenedCheck } from '../../policy/runtime-policy';
import type { PolicyDecision } from '../../policy/runtime-policy.types';
import type { AdkEvent, BaseSessionService, Session } from './adk.types';
import type { AdkInvocation } from './adk-invocation';
import { loadAdk } from './adk-peer';

/** Where an audit event goes: the ADK session of the invocation that made the decision. */
export interface AuditTarget {
  readonly sessionService?: Pick<BaseSessionService, 'appendEvent'>;
  readonly session: Session;
  readonly invocationId: string;
}

/**
 * The policy side every adapter part shares: one check (a deny decision, or `null`) and the one
 * audit write of spec 03 §6.11 in ADK terms.
 */
export class AdkPolicyGuard {
  constructor(
    /** `null`: a facade without a policy, every check passes. */
    readonly policy: RuntimePolicy | null,
    readonly auditSink: AuditSink | null,
  ) {}

  /** The deny decision of one check, `null` when allowed or when there is no policy. */
  screen(check: ScreenedCheck, subject: unknown, value: unknown): PolicyDecision | null {
    return this.policy === null ? null : screenCheck(this.policy, check, subject, value);
  }

  /**
   * Writes the audit event of a deny decision to the session (directly, so no `onEventCallback` sees
   * it), then gives the decision to the audit sink, then queues the event for the facade to stream.
   * Either write failing is `runtime_policy_audit_persistence_failed {target}`.
   */
  async recordDenial(target: AuditTarget, decision: PolicyDecision, invocation: AdkInvocation | undefined): Promise<void> {
    const event = auditEvent(target.invocationId, decision);
    try {
      if (target.sessionService === undefined) throw new Error('no session service');
      await target.sessionService.appendEvent({ session: target.session, event });
    } catch {
      throw new RunnerError('runtime_policy_audit_persistence_failed', { target: 'session' });
    }
    await this.recordToSink(decision);
    invocation?.pendingAudits.push(event);
  }

  /** The audit-sink half alone: a decision taken before any ADK code ran has no session to go to. */
  async recordToSink(decision: PolicyDecision): Promise<void> {
    if (this.auditSink === null) return;
    try {
      await this.auditSink.record(decision);
    } catch {
      throw new RunnerError('runtime_policy_audit_persistence_failed', { target: 'audit_sink' });
    }
  }
}

/**
 * The Runner's audit event as an ADK event: author `'system'`, the fixed text, the invocation id and
 * `actions.runtime_policy_decision`. Its content has no `role`, which keeps ADK from ever putting it
 * into a model request (ADK leaves role-less events out of the context).
 */
export function auditEvent(invocationId: string, decision: PolicyDecision): AdkEvent {
  return loadAdk().createEvent({
    invocationId,
    author: 'system',
    content: { parts: [{ text: AUDIT_EVENT_TEXT }] },
    // ADK's EventActions has no slot for it; the key is the Runner's, so a reader finds it in one place
    actions: { runtime_policy_decision: decision } as never,
  });
}
