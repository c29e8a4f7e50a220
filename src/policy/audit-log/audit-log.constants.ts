/** The hash-chained log table of policy decisions (migration `PolicyAuditLog1764400000000`). */
export const AUDIT_LOG_TABLE = 'agent_runtime_policy_audit_log';

/** The one-row chain head: `last_seq` and `last_hash` of the newest row. */
export const AUDIT_HEAD_TABLE = 'agent_runtime_policy_audit_head';

/** `prev_hash` of the first row and `last_hash` of an empty log: 64 zeros. */
export const GENESIS_HASH = '0'.repeat(64);
