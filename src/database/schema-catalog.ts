/**
 * Catalog reads of the schema validator (spec 04 §1): what Postgres says about the settings, the
 * migrations table, each declared table (with its user triggers) and the trigger functions the
 * declarations name. Names arrive as bound parameters; the only identifier
 * written into SQL is the migrations table, validated and quoted by the caller.
 */

/** Runs one statement with bound parameters and returns its rows. */
export type CatalogQuery = (sql: string, parameters?: readonly unknown[]) => Promise<Record<string, unknown>[]>;

/** A relation found by name: `relkind` and `relpersistence` are `pg_class` letters. */
export interface CatalogRelation {
  readonly oid: string;
  readonly relkind: string;
  readonly persistence: string;
}

export interface CatalogColumn {
  readonly name: string;
  readonly type: string;
  readonly notNull: boolean;
  readonly default: string | null;
  readonly generated: string | null;
  readonly collation: string | null;
}

export interface CatalogIndex {
  readonly name: string;
  readonly method: string;
  readonly unique: boolean;
  readonly primary: boolean;
  readonly exclusion: boolean;
  readonly valid: boolean;
  readonly columns: readonly string[];
  readonly predicate: string | null;
}

/** A `pg_constraint` row of type primary key, check or foreign key (unique and exclusion constraints are read as indexes). */
export interface CatalogConstraint {
  readonly name: string;
  readonly type: 'p' | 'c' | 'f';
  readonly validated: boolean;
  readonly columns: readonly string[];
  readonly checkExpression: string | null;
  readonly referencedSchema: string | null;
  readonly referencedTable: string | null;
  readonly referencedColumns: readonly string[];
  /** `confdeltype` letter: `a` no action, `r` restrict, `c` cascade, `n` set null, `d` set default. */
  readonly onDelete: string | null;
}

/** A user trigger (`pg_trigger`, not internal) of a table. */
export interface CatalogTrigger {
  readonly name: string;
  /** `tgenabled`: `O` fires in origin and local mode, `A` always, `R` on replicas only, `D` never. */
  readonly enabled: string;
  /** `tgtype` bit mask: 1 row, 2 before, 4 insert, 8 delete, 16 update, 32 truncate, 64 instead of. */
  readonly type: number;
  readonly functionSchema: string;
  readonly functionName: string;
  /** True when the trigger has a `WHEN` condition. */
  readonly hasCondition: boolean;
  /** Columns of `UPDATE OF`, empty for a trigger on every column. */
  readonly columns: readonly string[];
  readonly argumentCount: number;
}

/** A function without arguments in the validated schema, looked up by name for its fingerprint. */
export interface CatalogFunction {
  readonly name: string;
  readonly language: string;
  /** `pg_proc.prosrc`: the body exactly as it was created. */
  readonly body: string;
  readonly returnsTrigger: boolean;
}

/** What the catalog holds under one declared table name. */
export interface CatalogTable {
  /** The relation in the validated schema, or `null` when there is none. */
  readonly relation: CatalogRelation | null;
  /** A relation of the same name in this session's `pg_temp` schema, which shadows unqualified names. */
  readonly shadow: CatalogRelation | null;
  readonly columns: readonly CatalogColumn[];
  readonly indexes: readonly CatalogIndex[];
  readonly constraints: readonly CatalogConstraint[];
  readonly triggers: readonly CatalogTrigger[];
}

export interface CatalogSnapshot {
  /** The schema the tables were looked up in (`current_schema()` when none was given; `null` when it resolves to none). */
  readonly schema: string | null;
  readonly synchronousCommit: string;
  readonly synchronousStandbyNames: string;
  /** Names recorded in the migrations table; `null` when the table does not exist. */
  readonly appliedMigrations: ReadonlySet<string> | null;
  readonly tables: ReadonlyMap<string, CatalogTable>;
  /** The requested functions found in `schema`, by name. */
  readonly functions: ReadonlyMap<string, CatalogFunction>;
}

/** What to read. Names are already validated against `POSTGRES_IDENTIFIER`. */
export interface CatalogRequest {
  readonly schema: string | null;
  readonly tableNames: readonly string[];
  /** Trigger functions the declared triggers call, looked up in `schema`. @default [] */
  readonly functionNames?: readonly string[];
  /** The TypeORM migrations table, or `null` when the DataSource registers no migrations. */
  readonly migrationsTable: { readonly schema: string | null; readonly name: string } | null;
}

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
