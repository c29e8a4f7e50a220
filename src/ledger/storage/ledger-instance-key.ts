import { advisoryLockKey } from '../../database/instance-lock';

/** Namespace of the ledger's instance locks; `ledger-sql.ts` recomputes the same key in SQL. */
export const LEDGER_INSTANCE_LOCK_NAMESPACE = 'agent_runtime.ledger.instance';

/**
 * Advisory-lock key of a ledger instance (spec 04 §6): the first 8 bytes (signed, big-endian) of
 * SHA-256 over `agent_runtime.ledger.instance:` + instanceId, as a decimal string.
 */
export function instanceLockKey(instanceId: string): string {
  return advisoryLockKey(LEDGER_INSTANCE_LOCK_NAMESPACE, instanceId);
}
