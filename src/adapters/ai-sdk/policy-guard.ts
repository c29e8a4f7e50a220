import type { AuditSink } from '../../policy/audit-log/audit-sink';
import type { RuntimePolicy } from '../../policy/runtime-policy';
import type { PolicyDecision } from '../../policy/runtime-policy.types';
import { RunnerError } from '../../runner/runner.errors';

/** Receives every decision the adapter makes, allow and deny; a throw is ignored. */
export type DecisionListener = (decision: PolicyDecision) => void;

/** Which check of the policy runs (spec 02 §4). */
export type GuardCheck = 'agent' | 'tool' | 'content';

/**
 * The policy, audit sink and decision listener of one `guardTools` or middleware: every check goes
 * through {@link decide}, every denial through {@link recordDenial}, so both adapters report and
 * audit the same way the Runner does (spec 03 §6.11).
 */
export class PolicyGuard {
  constructor(
    readonly policy: RuntimePolicy,
    private readonly auditSink: AuditSink | null,
    private readonly onDecision: DecisionListener | null,
  ) {}

  /** One check; never throws (the policy denies what it cannot measure). */
  decide(check: GuardCheck, subject: unknown, value: unknown): PolicyDecision {
    const decision =
      check === 'agent'
        ? this.policy.checkAgent(subject, value)
        : check === 'tool'
          ? this.policy.checkTool(subject, value)
          : this.policy.checkContent(subject, value);
    if (this.onDecision !== null) {
      try {
        this.onDecision(decision);
      } catch {
        // a throwing listener never breaks the guarded call (spec 00, telemetry)
      }
    }
    return decision;
  }

  /**
   * Gives a deny decision to the audit sink, when there is one; allow decisions are not written.
   * A failing sink rejects with `runtime_policy_audit_persistence_failed` `{target: 'audit_sink'}`,
   * so a denial is never lost silently. There is no session here, so the sink is the only target.
   */
  async recordDenial(decision: PolicyDecision): Promise<void> {
    if (decision.outcome !== 'deny' || this.auditSink === null) return;
    const sink = this.auditSink;
    try {
      await sink.record(decision);
    } catch {
      throw new RunnerError('runtime_policy_audit_persistence_failed', { target: 'audit_sink' });
    }
  }
}
