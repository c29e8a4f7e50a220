import type { DataSource } from 'typeorm';
import { assertSchema } from '../../../../database/schema/schema-validator';
import { SchemaValidatorError } from '../../../../database/schema-validator.errors';
import type { SchemaCheckTarget } from '../../../../database/schema/startup-schema-check';
import { ClusterError } from '../../../../cluster/cluster.errors';
import { RUN_ITEMS_TABLE_SPEC, RUNS_TABLE_SPEC } from './cluster-runs.schema';

/** Both tables of the Postgres run store, as the app-wide start-up check validates them. */
export function runTablesTarget(dataSource: DataSource, schema: string | null): SchemaCheckTarget {
  return { dataSource, specs: [RUNS_TABLE_SPEC, RUN_ITEMS_TABLE_SPEC], options: schema === null ? {} : { schema } };
}

/** Validates both tables: `schema_mismatch` with `{mismatches}`; a catalog that cannot be read is `cluster_unavailable`. */
export async function assertRunTables(target: SchemaCheckTarget): Promise<void> {
  try {
    await assertSchema(target.dataSource, target.specs, target.options ?? {}, (mismatches) => new ClusterError('schema_mismatch', { mismatches }));
  } catch (error) {
    if (error instanceof SchemaValidatorError) throw new ClusterError('cluster_unavailable', { ...error.details });
    throw error;
  }
}
