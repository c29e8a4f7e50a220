import { isRolledBack, type PostgresFailure } from '../database/postgres-failure';
import { RuntimeServiceError } from './runtime-service.errors';

/** SQLSTATE classes of an outage rather than a fault: insufficient resources, operator intervention (shutdown, cancel, statement timeout), system error. */
const OUTAGE_CLASSES: ReadonlySet<string> = new Set(['53', '57', '58']);

/**
 * A database failure of a Postgres adapter, with the SQLSTATE only (spec 07 §4). An outage — the
 * connection failed or was lost, the transaction was rolled back (serialisation, deadlock, statement
 * timeout), classes 53/57/58, or no SQLSTATE at all (a pool that is gone) — is
 * `runtime_service_store_unavailable` (503, the call may be repeated); anything else the database
 * refuses (a renamed column, a missing table, a constraint) is the adapter's own failure,
 * `artifact_shard_adapter_failed` / `memory_shard_adapter_failed` (500).
 */
export function postgresStoreFailure(kind: 'artifact' | 'memory', failure: PostgresFailure): RuntimeServiceError {
  const { sqlstate } = failure.codes;
  if (failure.connection || isRolledBack(failure) || sqlstate === null || OUTAGE_CLASSES.has(sqlstate.slice(0, 2))) {
    return new RuntimeServiceError('runtime_service_store_unavailable', { sqlstate });
  }
  return new RuntimeServiceError(kind === 'artifact' ? 'artifact_shard_adapter_failed' : 'memory_shard_adapter_failed', { sqlstate });
}
