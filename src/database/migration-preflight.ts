import type { DataSource } from 'typeorm';
import type { MigrationObjects } from '../../migrations';
import type { SchemaMismatch } from './schema/schema-comparison';
import { SchemaValidatorError } from './schema-validator.errors';

const STATE_SQL = `
  WITH target AS (SELECT coalesce($1::text, current_schema()) AS schema)
  SELECT (SELECT schema FROM target) AS schema,
         EXISTS (SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                  WHERE n.nspname = (SELECT schema FROM target) AND c.relname = $2::text) AS has_migrations_table,
         ARRAY(SELECT c.relname::text FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = (SELECT schema FROM target) AND c.relname = ANY($3::text[])) AS tables,
         ARRAY(SELECT p.proname::text FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
                WHERE n.nspname = (SELECT schema FROM target) AND p.proname = ANY($4::text[])) AS functions`;

/**
 * The migrations registered on `dataSource` that have no row in its migrations table although
 * objects they create (`objects`, by migration name) exist: each a `migration:<name>` mismatch
 * `applied` / `missing row, tables present` (or `functions present`). Runs before any migration,
 * so a deleted row is reported as what it is rather than as the failure of a re-run migration.
 */
export async function findMigrationsMissingTheirRow(
  dataSource: DataSource,
  objects: Readonly<Record<string, MigrationObjects>>,
): Promise<SchemaMismatch[]> {
  const table = dataSource.options.migrationsTableName ?? 'migrations';
  const schema = (dataSource.options as { schema?: string }).schema ?? null;
  const names = dataSource.migrations.map((migration) => migration.name ?? migration.constructor.name);
  const declared = names.map((name) => ({ name, tables: objects[name]?.tables ?? [], functions: objects[name]?.functions ?? [] }));
  const [state] = (await dataSource.query(STATE_SQL, [
    schema,
    table,
    declared.flatMap((migration) => migration.tables),
    declared.flatMap((migration) => migration.functions),
  ])) as Array<{ schema: string; has_migrations_table: boolean; tables: string[]; functions: string[] }>;
  const applied = new Set<string>();
  if (state.has_migrations_table) {
    const rows = (await dataSource.query(`SELECT name FROM ${quote(state.schema)}.${quote(table)}`)) as Array<{ name: string }>;
    for (const row of rows) applied.add(row.name);
  }
  const tables = new Set(state.tables);
  const functions = new Set(state.functions);
  return declared
    .filter((migration) => !applied.has(migration.name))
    .flatMap((migration) => {
      const actual = migration.tables.some((name) => tables.has(name))
        ? 'missing row, tables present'
        : migration.functions.some((name) => functions.has(name))
          ? 'missing row, functions present'
          : null;
      return actual === null ? [] : [Object.freeze({ table, property: `migration:${migration.name}` as const, expected: 'applied', actual })];
    });
}

/** {@link findMigrationsMissingTheirRow}, throwing `SchemaValidatorError` `schema_mismatch` when it finds any. */
export async function assertMigrationRowsPresent(dataSource: DataSource, objects: Readonly<Record<string, MigrationObjects>>): Promise<void> {
  const mismatches = await findMigrationsMissingTheirRow(dataSource, objects);
  if (mismatches.length > 0) throw new SchemaValidatorError('schema_mismatch', { mismatches });
}

function quote(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}
