import type { AuditSink } from './audit-sink';
import type { AuditDecisions } from '../runtime-policy.constants';
import type { PolicyDecision } from '../policy-decision';
import { RuntimePolicyError } from '../runtime-policy.errors';
import { systemClock, type Clock } from '../../shared/time/clock';
import { within } from '../../shared/time/timeout';

/**
 * Sends the decisions `auditDecisions` selects (every denial; allows too with `'all'`) to the sink,
 * each bounded by `timeoutMs`. Rejects with `runtime_policy_audit_persistence_failed` when the sink
 * fails or hangs, so the caller can fail closed; resolves at once when there is no sink.
 */
export class AuditRecorder {
  constructor(
    private readonly sink: AuditSink | null,
    private readonly auditDecisions: AuditDecisions,
    private readonly timeoutMs: number,
    private readonly clock: Clock = systemClock,
  ) {}

  /** Whether a decision of this outcome goes to the sink. */
  selects(decision: PolicyDecision): boolean {
    return this.sink !== null && (decision.outcome === 'deny' || this.auditDecisions === 'all');
  }

  async record(decision: PolicyDecision): Promise<void> {
    if (!this.selects(decision)) return;
    const sink = this.sink as AuditSink;
    const timedOut = () => new RuntimePolicyError('runtime_policy_audit_persistence_failed', { timeout_ms: this.timeoutMs });
    try {
      await within(Promise.resolve().then(() => sink.record(decision)), this.timeoutMs, this.clock, timedOut);
    } catch (error) {
      if (RuntimePolicyError.isRuntimePolicyError(error) && error.code === 'runtime_policy_audit_persistence_failed') throw error;
      throw new RuntimePolicyError('runtime_policy_audit_persistence_failed');
    }
  }
}
