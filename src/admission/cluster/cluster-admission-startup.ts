import type { DataSource } from 'typeorm';
import { AdmissionError } from '../admission.errors';
import type { PgPool } from '../../database/postgres-pool';
import { assertSchema } from '../../database/schema/schema-validator';
import type { SchemaCheckTarget } from '../../database/schema/startup-schema-check';
import { SchemaValidatorError, type SchemaReadFailureDetails } from '../../database/schema-validator.errors';
import { runTransaction } from '../../database/transaction-runner';
import { ClusterError } from '../../cluster/cluster.errors';
import type { AdmissionConfigFingerprint } from './admission-config-fingerprint';
import { storeUnavailable } from './admission-decisions';
import { ADMISSION_DECISION_LOCK_KEY, INSERT_CONFIG, LOCK_DECISIONS, SELECT_CONFIG } from './admission-sql';
import { CLUSTER_ADMISSION_TABLE_SPECS } from './cluster-admission.schema';

/** The admission tables as the app-wide start-up check validates them. */
export function clusterAdmissionSchemaTarget(dataSource: DataSource): SchemaCheckTarget {
  return { dataSource, specs: CLUSTER_ADMISSION_TABLE_SPECS };
}

/**
 * Compares the admission tables with their specs: `ClusterError('schema_mismatch')` with
 * `details.mismatches`, or `admission_store_unavailable` (codes only) when the catalog cannot be read.
 */
export async function assertAdmissionSchema(dataSource: DataSource): Promise<void> {
  try {
    await assertSchema(dataSource, CLUSTER_ADMISSION_TABLE_SPECS, {}, (mismatches) => new ClusterError('schema_mismatch', { mismatches }));
  } catch (error) {
    if (!(error instanceof SchemaValidatorError)) throw error;
    const { sqlstate, socket_error } = error.details as SchemaReadFailureDetails;
    throw new AdmissionError('admission_store_unavailable', { sqlstate, socket_error });
  }
}

/**
 * Writes this instance's fingerprint when the cluster has none yet, else compares it (spec 08 §3):
 * `cluster_config_mismatch` with `details: {expected, actual}` (the cluster's, this instance's).
 * Under the decision lock, so two instances starting together cannot both write.
 */
export async function agreeOnConfig(pool: PgPool, mine: AdmissionConfigFingerprint): Promise<void> {
  const expected = await runTransaction(
    pool,
    async (client) => {
      await client.query(LOCK_DECISIONS, [ADMISSION_DECISION_LOCK_KEY]);
      const { rows } = await client.query(SELECT_CONFIG);
      if (rows.length > 0) return rows[0].fingerprint as string;
      await client.query(INSERT_CONFIG, [mine.fingerprint, mine.limits]);
      return mine.fingerprint;
    },
    storeUnavailable,
  );
  if (expected !== mine.fingerprint) throw new AdmissionError('cluster_config_mismatch', { expected, actual: mine.fingerprint });
}
