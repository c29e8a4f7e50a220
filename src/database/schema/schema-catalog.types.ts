/*
 * What the schema validator reads from the Postgres catalog (spec 04 §1): settings, the migrations
 * table, each declared table with its columns, indexes, constraints and user triggers, and the
 * trigger functions the declarations name. `schema-catalog.ts` reads it; the comparisons judge it.
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
