/**
 * Catalog reads of the schema validator (spec 04 §1): what Postgres says about the settings, the
 * migrations table, each declared table (with its user triggers) and the trigger functions the
 * declarations name. Names arrive as bound parameters; the only identifier
 * written into SQL is the migrations table, validated and quoted by the caller.
 */

import type {
  CatalogColumn,
  CatalogConstraint,
  CatalogFunction,
  CatalogIndex,
  CatalogQuery,
  CatalogRelation,
  CatalogRequest,
  CatalogSnapshot,
  CatalogTable,
  CatalogTrigger,
} from './schema-catalog.types';

const SETTINGS_SQL = `
  SELECT current_schema() AS current_schema,
         current_setting('synchronous_commit') AS synchronous_commit,
         current_setting('synchronous_standby_names') AS synchronous_standby_names`;

const RELATIONS_SQL = `
  SELECT c.oid::text AS oid, c.relname::text AS name, c.relkind::text AS relkind,
         c.relpersistence::text AS persistence, n.nspname::text AS schema,
         (n.oid = pg_my_temp_schema() AND n.nspname <> $1::text) AS shadow
    FROM pg_catalog.pg_class c
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
   WHERE c.relname = ANY($2::text[])
     AND (n.nspname = $1::text OR n.oid = pg_my_temp_schema())`;

const COLUMNS_SQL = `
  SELECT a.attrelid::text AS oid, a.attname::text AS name,
         format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS not_null,
         CASE WHEN a.attgenerated = '' THEN pg_get_expr(d.adbin, d.adrelid) END AS default_expr,
         CASE WHEN a.attgenerated <> '' THEN pg_get_expr(d.adbin, d.adrelid) END AS generated_expr,
         co.collname::text AS collation
    FROM pg_catalog.pg_attribute a
    LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    LEFT JOIN pg_catalog.pg_collation co ON co.oid = a.attcollation
   WHERE a.attrelid = ANY($1::oid[]) AND a.attnum > 0 AND NOT a.attisdropped`;

const INDEXES_SQL = `
  SELECT i.indrelid::text AS oid, ic.relname::text AS name, am.amname::text AS method,
         i.indisunique AS is_unique, i.indisprimary AS is_primary, i.indisexclusion AS is_exclusion,
         i.indisvalid AS is_valid,
         ARRAY(SELECT pg_get_indexdef(i.indexrelid, k, false)
                 FROM generate_series(1, i.indnkeyatts::int) AS k ORDER BY k) AS columns,
         pg_get_expr(i.indpred, i.indrelid) AS predicate
    FROM pg_catalog.pg_index i
    JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
    JOIN pg_catalog.pg_am am ON am.oid = ic.relam
   WHERE i.indrelid = ANY($1::oid[])`;

const CONSTRAINTS_SQL = `
  SELECT con.conrelid::text AS oid, con.conname::text AS name, con.contype::text AS type,
         con.convalidated AS validated,
         ARRAY(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord)
                 JOIN pg_catalog.pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum
                ORDER BY k.ord) AS columns,
         CASE WHEN con.contype = 'c' THEN pg_get_expr(con.conbin, con.conrelid) END AS check_expr,
         fn.nspname::text AS ref_schema, fc.relname::text AS ref_table,
         ARRAY(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY AS k(attnum, ord)
                 JOIN pg_catalog.pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum
                ORDER BY k.ord) AS ref_columns,
         CASE WHEN con.contype = 'f' THEN con.confdeltype::text END AS on_delete
    FROM pg_catalog.pg_constraint con
    LEFT JOIN pg_catalog.pg_class fc ON fc.oid = con.confrelid
    LEFT JOIN pg_catalog.pg_namespace fn ON fn.oid = fc.relnamespace
   WHERE con.conrelid = ANY($1::oid[]) AND con.contype IN ('p', 'c', 'f')`;

const TRIGGERS_SQL = `
  SELECT t.tgrelid::text AS oid, t.tgname::text AS name, t.tgenabled::text AS enabled, t.tgtype::int AS type,
         pn.nspname::text AS function_schema, p.proname::text AS function_name,
         (t.tgqual IS NOT NULL) AS has_condition, t.tgnargs::int AS argument_count,
         ARRAY(SELECT a.attname::text FROM unnest(t.tgattr::int2[]) WITH ORDINALITY AS k(attnum, ord)
                 JOIN pg_catalog.pg_attribute a ON a.attrelid = t.tgrelid AND a.attnum = k.attnum
                ORDER BY k.ord) AS columns
    FROM pg_catalog.pg_trigger t
    JOIN pg_catalog.pg_proc p ON p.oid = t.tgfoid
    JOIN pg_catalog.pg_namespace pn ON pn.oid = p.pronamespace
   WHERE t.tgrelid = ANY($1::oid[]) AND NOT t.tgisinternal`;

const FUNCTIONS_SQL = `
  SELECT p.proname::text AS name, l.lanname::text AS language, p.prosrc AS body,
         (p.prorettype = 'pg_catalog.trigger'::pg_catalog.regtype) AS returns_trigger
    FROM pg_catalog.pg_proc p
    JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
    JOIN pg_catalog.pg_language l ON l.oid = p.prolang
   WHERE n.nspname = $1::text AND p.proname = ANY($2::text[]) AND p.pronargs = 0`;

const MIGRATIONS_TABLE_SQL = `
  SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
   WHERE n.nspname = $1::text AND c.relname = $2::text AND c.relkind IN ('r', 'p')`;

/** Reads everything the comparison needs; run inside one read-only, repeatable-read transaction. */
export async function readSchemaCatalog(query: CatalogQuery, request: CatalogRequest): Promise<CatalogSnapshot> {
  const [settings] = await query(SETTINGS_SQL);
  const schema = request.schema ?? nullableText(settings.current_schema);
  const migrationsSchema = request.migrationsTable?.schema ?? nullableText(settings.current_schema);
  const appliedMigrations =
    request.migrationsTable && migrationsSchema !== null
      ? await readAppliedMigrations(query, migrationsSchema, request.migrationsTable.name)
      : null;

  const relationRows = schema === null ? [] : await query(RELATIONS_SQL, [schema, request.tableNames]);
  const relations = new Map<string, { relation: CatalogRelation | null; shadow: CatalogRelation | null }>();
  for (const row of relationRows) {
    const entry = relations.get(text(row.name)) ?? { relation: null, shadow: null };
    const relation = { oid: text(row.oid), relkind: text(row.relkind), persistence: text(row.persistence) };
    if (row.shadow === true) entry.shadow = relation;
    else entry.relation = relation;
    relations.set(text(row.name), entry);
  }
  const oids = [...relations.values()].flatMap((entry) => (entry.relation ? [entry.relation.oid] : []));
  const [columnRows, indexRows, constraintRows, triggerRows] =
    oids.length === 0
      ? [[], [], [], []]
      : [await query(COLUMNS_SQL, [oids]), await query(INDEXES_SQL, [oids]), await query(CONSTRAINTS_SQL, [oids]), await query(TRIGGERS_SQL, [oids])];
  const functionNames = [...new Set(request.functionNames ?? [])];
  const functionRows = schema === null || functionNames.length === 0 ? [] : await query(FUNCTIONS_SQL, [schema, functionNames]);

  const tables = new Map<string, CatalogTable>();
  for (const name of request.tableNames) {
    const { relation = null, shadow = null } = relations.get(name) ?? {};
    const mine = (row: Record<string, unknown>): boolean => relation !== null && row.oid === relation.oid;
    tables.set(name, {
      relation,
      shadow,
      columns: columnRows.filter(mine).map(toColumn),
      indexes: indexRows.filter(mine).map(toIndex),
      constraints: constraintRows.filter(mine).map(toConstraint),
      triggers: triggerRows.filter(mine).map(toTrigger),
    });
  }
  return {
    schema,
    synchronousCommit: text(settings.synchronous_commit),
    synchronousStandbyNames: text(settings.synchronous_standby_names),
    appliedMigrations,
    tables,
    functions: new Map(functionRows.map((row) => [text(row.name), toFunction(row)])),
  };
}

/** `SHOW synchronous_commit` on a connection outside the pool. */
export async function readSynchronousCommit(query: CatalogQuery): Promise<string> {
  const [row] = await query('SHOW synchronous_commit');
  return text(row.synchronous_commit);
}

async function readAppliedMigrations(query: CatalogQuery, schema: string, table: string): Promise<ReadonlySet<string> | null> {
  const exists = await query(MIGRATIONS_TABLE_SQL, [schema, table]);
  if (exists.length === 0) return null;
  const rows = await query(`SELECT name FROM ${quoteIdentifier(schema)}.${quoteIdentifier(table)}`);
  return new Set(rows.map((row) => text(row.name)));
}

/** Quotes an identifier that already matched `POSTGRES_IDENTIFIER`. */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function toColumn(row: Record<string, unknown>): CatalogColumn {
  return {
    name: text(row.name),
    type: text(row.type),
    notNull: row.not_null === true,
    default: nullableText(row.default_expr),
    generated: nullableText(row.generated_expr),
    collation: nullableText(row.collation),
  };
}

function toIndex(row: Record<string, unknown>): CatalogIndex {
  return {
    name: text(row.name),
    method: text(row.method),
    unique: row.is_unique === true,
    primary: row.is_primary === true,
    exclusion: row.is_exclusion === true,
    valid: row.is_valid === true,
    columns: textList(row.columns),
    predicate: nullableText(row.predicate),
  };
}

function toConstraint(row: Record<string, unknown>): CatalogConstraint {
  return {
    name: text(row.name),
    type: text(row.type) as CatalogConstraint['type'],
    validated: row.validated === true,
    columns: textList(row.columns),
    checkExpression: nullableText(row.check_expr),
    referencedSchema: nullableText(row.ref_schema),
    referencedTable: nullableText(row.ref_table),
    referencedColumns: textList(row.ref_columns),
    onDelete: nullableText(row.on_delete),
  };
}

function toTrigger(row: Record<string, unknown>): CatalogTrigger {
  return {
    name: text(row.name),
    enabled: text(row.enabled),
    type: Number(row.type),
    functionSchema: text(row.function_schema),
    functionName: text(row.function_name),
    hasCondition: row.has_condition === true,
    columns: textList(row.columns),
    argumentCount: Number(row.argument_count),
  };
}

function toFunction(row: Record<string, unknown>): CatalogFunction {
  return { name: text(row.name), language: text(row.language), body: text(row.body), returnsTrigger: row.returns_trigger === true };
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : String(value);
}

function nullableText(value: unknown): string | null {
  return value === null || value === undefined ? null : text(value);
}

function textList(value: unknown): string[] {
  return Array.isArray(value) ? value.map(text) : [];
}
