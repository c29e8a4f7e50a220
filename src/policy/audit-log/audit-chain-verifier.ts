import { RuntimePolicyError } from '../runtime-policy.errors';
import type { AuditChainReport } from './audit-chain-verification';
import type { AuditSink } from './audit-sink';
import { DeferredPostgresAuditLog } from './deferred-postgres-audit-log.service';
import { PostgresAuditLog } from './postgres-audit-log';

/**
 * Verifies the hash chain of the audit log `RuntimePolicyModule` writes to (spec 02 §9), so an
 * application can expose or schedule verification without knowing which sink is configured.
 * `verify()` rejects with `RuntimePolicyError` `runtime_policy_audit_log_not_configured` when the
 * module's `auditLog` is not `'postgres'` (nor a `PostgresAuditLog`).
 *
 * @example
 * constructor(@Inject(AuditChainVerifier) private readonly chain: AuditChainVerifier) {}
 * const report = await this.chain.verify(); // report.ok, report.first_broken
 */
export interface AuditChainVerifier {
  verify(): Promise<AuditChainReport>;
}

/** Injection token of the {@link AuditChainVerifier}: `@Inject(AuditChainVerifier)`. */
export const AuditChainVerifier: unique symbol = Symbol('AuditChainVerifier');

const notConfigured: AuditChainVerifier = Object.freeze({
  verify: () => Promise.reject(new RuntimePolicyError('runtime_policy_audit_log_not_configured')),
});

/** The configured sink when it is this package's Postgres audit log, else a verifier that says none is configured. */
export function auditChainVerifierOf(sink: AuditSink | null): AuditChainVerifier {
  return sink instanceof DeferredPostgresAuditLog || sink instanceof PostgresAuditLog ? sink : notConfigured;
}
