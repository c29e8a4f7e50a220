import { classifyFailure, type PostgresFailure } from '../../database/postgres-failure';
import type { DedicatedClient } from '../../database/postgres-pool';
import { runTransaction, runTransactionOn, type TransactionClient } from '../../database/transaction-runner';
import { canonicalJson } from '../../json/canonical-json';
import { EvalServiceError } from '../eval.errors';
import type { EvalIdentitySource, EvalStoreIdentity } from '../eval.types';
import type { EvalStoreContext } from './eval-store-context';
import { evalStoreStatements } from './eval-store-sql';

/** `pg_control_system()` is not permitted to the role (an operator revoked it, as managed Postgres does). */
const INSUFFICIENT_PRIVILEGE = '42501';

function unavailable(failure?: PostgresFailure): EvalServiceError {
  return new EvalServiceError('eval_store_identity_unavailable', failure ? { ...failure.codes } : { sqlstate: null, socket_error: null });
}

/**
 * The identity of the store's tables as seen through `connection`, or through a pooled connection
 * when it is omitted (spec 05 §2.4): canonical JSON of `{backend: {source, id}, database, schema,
 * table_prefix}`. The backend is the cluster's `system_identifier` when the role may call
 * `pg_control_system()` (then the identity-row identity follows as the second entry), else the
 * UUID of the identity table's row. Only the `schema` and `tablePrefix` options enter it. Any
 * failure, a missing identity row included, is `eval_store_identity_unavailable`.
 */
export async function readOwnershipIdentity(context: EvalStoreContext, connection?: DedicatedClient): Promise<EvalStoreIdentity> {
  const work = (client: TransactionClient) => identityOn(client, context);
  const options = { statementTimeoutMs: context.settings.statementTimeoutMs };
  if (connection !== undefined) return runTransactionOn(connection, work, unavailable, options);
  let pool;
  try {
    pool = context.pool();
  } catch {
    throw unavailable();
  }
  return runTransaction(pool, work, unavailable, options);
}

async function identityOn(client: TransactionClient, context: EvalStoreContext): Promise<EvalStoreIdentity> {
  const [where] = (await client.query('SELECT current_database() AS database, current_schema() AS schema')).rows;
  const schema = context.settings.schema ?? (where?.schema as string | null | undefined) ?? null;
  if (schema === null) throw unavailable();
  const systemIdentifier = await readSystemIdentifier(client);
  const [row] = (await client.query(evalStoreStatements(schema, context.settings.tablePrefix).identityRow)).rows;
  if (row === undefined || typeof row.id !== 'string') throw unavailable();
  const identity = (source: EvalIdentitySource, id: string) =>
    canonicalJson({ backend: { source, id }, database: where.database as string, schema, table_prefix: context.settings.tablePrefix });
  const rowIdentity = identity('identity_row', row.id);
  if (systemIdentifier === null) return Object.freeze({ identity_source: 'identity_row', identities: Object.freeze([rowIdentity]) });
  return Object.freeze({ identity_source: 'system_identifier', identities: Object.freeze([identity('system_identifier', systemIdentifier), rowIdentity]) });
}

/** The cluster's system identifier as a decimal string, or `null` when the role may not read it. */
async function readSystemIdentifier(client: TransactionClient): Promise<string | null> {
  // a refused call aborts the transaction; the savepoint keeps the identity row readable after it
  await client.query('SAVEPOINT eval_store_identity');
  try {
    const [row] = (await client.query('SELECT system_identifier::text AS id FROM pg_control_system()')).rows;
    await client.query('RELEASE SAVEPOINT eval_store_identity');
    return typeof row?.id === 'string' ? row.id : null;
  } catch (error) {
    if (classifyFailure(error).codes.sqlstate !== INSUFFICIENT_PRIVILEGE) throw error;
    await client.query('ROLLBACK TO SAVEPOINT eval_store_identity');
    return null;
  }
}
