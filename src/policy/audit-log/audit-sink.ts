import type { PolicyDecision } from '../runtime-policy.types';

/**
 * Where audit decisions are stored (spec 02 §8). `record` resolves only once the decision is
 * durably stored and must tolerate the same decision twice. The Runner uses the same interface.
 */
export interface AuditSink {
  record(decision: PolicyDecision): Promise<void>;
}

/** Injection token of the {@link AuditSink}: `@Inject(AuditSink)`. */
export const AuditSink: unique symbol = Symbol('AuditSink');
