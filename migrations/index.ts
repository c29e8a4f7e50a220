import { PolicyAuditLog1764400000000 } from './1764400000000-policy-audit-log';
import { InvocationLedger1764500000000 } from './1764500000000-invocation-ledger';

/**
 * Every TypeORM migration of the package, in order. Listed explicitly (not globbed) so the same
 * list serves the compiled CLI, the reference app and the Jest global setup.
 */
export const AGENT_RUNTIME_MIGRATIONS: Function[] = [PolicyAuditLog1764400000000, InvocationLedger1764500000000];
