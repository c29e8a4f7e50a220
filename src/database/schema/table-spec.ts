import { deepFreeze } from '../../json/json-copy';

/**
 * The shape a component needs from one of its tables (spec 04 §1.2): plain frozen data, exported
 * beside the component's entity and compared with the live catalog by `validateSchema`.
 * Types and expressions are written as Postgres prints them (`format_type`, `pg_get_expr`).
 */
export interface TableSpec {
  /** Unqualified table name, resolved in the validator's `schema`. */
  readonly name: string;
  /** Every column of the table; an undeclared column is a mismatch. Order is not compared. */
  readonly columns: readonly ColumnSpec[];
  /** Primary key columns, order significant; an empty list requires the table to have none. */
  readonly primaryKey: readonly string[];
  /** Unique constraints or unique indexes, matched by name. @default [] */
  readonly uniques?: readonly UniqueSpec[];
  /** Indexes, matched by name; undeclared non-unique indexes are tolerated. @default [] */
  readonly indexes?: readonly IndexSpec[];
  /** Check constraints, matched by name. @default [] */
  readonly checks?: readonly CheckSpec[];
  /** Foreign keys, matched by name. @default [] */
  readonly foreignKeys?: readonly ForeignKeySpec[];
  /**
   * Triggers, matched by name; each must be enabled and call its function, whose body must have the
   * declared fingerprint. An undeclared trigger is a mismatch: it changes which writes succeed. @default []
   */
  readonly triggers?: readonly TriggerSpec[];
}

/** One column. `default`, `collation` and `generated` are compared only when declared. */
export interface ColumnSpec {
  readonly name: string;
  /** Canonical `format_type(atttypid, atttypmod)` text: `text`, `bigint`, `character(64)`, `timestamp with time zone`. */
  readonly type: string;
  readonly nullable: boolean;
  /** Default expression as `pg_get_expr` prints it (`'ready'::text`, `0`, `now()`); `null` requires no default. */
  readonly default?: string | null;
  /** Collation name (`C`, `default`). */
  readonly collation?: string;
  /** Generation expression of a generated column; `null` requires an ordinary column. */
  readonly generated?: string | null;
}

/** A unique constraint or unique index, key columns in order. */
export interface UniqueSpec {
  readonly name: string;
  readonly columns: readonly string[];
}

/** An index: key columns or expressions in order, access method, optional partial-index predicate. */
export interface IndexSpec {
  readonly name: string;
  /** Key columns or expressions as `pg_get_indexdef(index, column, false)` prints them. */
  readonly columns: readonly string[];
  readonly unique: boolean;
  /** Access method: `btree`, `gin`, `gist`, `hash`, `brin`, … */
  readonly method: string;
  /** Partial-index predicate as `pg_get_expr(indpred, indrelid)` prints it; absent for a full index. */
  readonly predicate?: string;
}

/** A check constraint; its expression (as `pg_get_expr(conbin, conrelid)` prints it) is compared when declared. */
export interface CheckSpec {
  readonly name: string;
  readonly expression?: string;
}

/** `ON DELETE` action of a foreign key, as written in SQL (lower case). */
export type ForeignKeyAction = 'no action' | 'restrict' | 'cascade' | 'set null' | 'set default';

/** A foreign key. `references.table` is unqualified (same schema) or `schema.table`. */
export interface ForeignKeySpec {
  readonly name: string;
  readonly columns: readonly string[];
  readonly references: { readonly table: string; readonly columns: readonly string[] };
  readonly onDelete: ForeignKeyAction;
}

/** When a trigger fires relative to the change. */
export type TriggerTiming = 'before' | 'after';

/** An event a trigger fires on. */
export type TriggerEvent = 'insert' | 'update' | 'delete' | 'truncate';

/** Whether a trigger fires once per row or once per statement (`truncate` triggers are statement triggers). */
export type TriggerLevel = 'row' | 'statement';

/**
 * A trigger without a `WHEN` condition, column list or arguments, calling a function of the
 * table's schema that takes no arguments. `functionFingerprint` is
 * `fingerprintFunction(language, body)` of that function as the migration creates it.
 */
export interface TriggerSpec {
  readonly name: string;
  readonly timing: TriggerTiming;
  /** Events in any order; each at most once. */
  readonly events: readonly TriggerEvent[];
  readonly level: TriggerLevel;
  /** Unqualified name of the trigger function, resolved in the table's schema. */
  readonly function: string;
  /** Lowercase hex SHA-256 from `fingerprintFunction` (64 characters). */
  readonly functionFingerprint: string;
}

/** Schema and table names accepted from options; longer or non-lower-case names are refused. */
export const POSTGRES_IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** True when `name` may be used as a schema or table name (`^[a-z_][a-z0-9_]{0,62}$`). */
export function isPostgresIdentifier(name: unknown): name is string {
  return typeof name === 'string' && POSTGRES_IDENTIFIER.test(name);
}

const FOREIGN_KEY_ACTIONS: readonly string[] = ['no action', 'restrict', 'cascade', 'set null', 'set default'];
const TRIGGER_TIMINGS: readonly string[] = ['before', 'after'];
const TRIGGER_EVENTS: readonly string[] = ['insert', 'update', 'delete', 'truncate'];
const TRIGGER_LEVELS: readonly string[] = ['row', 'statement'];
const FINGERPRINT = /^[0-9a-f]{64}$/;

/**
 * Checks `spec` and returns a deep-frozen copy with the optional lists filled in. A malformed
 * spec is a programming error of the declaring component: it throws a `TypeError` naming the field.
 */
export function defineTableSpec(spec: TableSpec): TableSpec {
  assertTableSpec(spec);
  return deepFreeze({
    name: spec.name,
    columns: spec.columns.map((column) => ({ ...column })),
    primaryKey: [...spec.primaryKey],
    uniques: (spec.uniques ?? []).map((unique) => ({ name: unique.name, columns: [...unique.columns] })),
    indexes: (spec.indexes ?? []).map((index) => ({ ...index, columns: [...index.columns] })),
    checks: (spec.checks ?? []).map((check) => ({ ...check })),
    foreignKeys: (spec.foreignKeys ?? []).map((fk) => ({
      ...fk,
      columns: [...fk.columns],
      references: { table: fk.references.table, columns: [...fk.references.columns] },
    })),
    triggers: (spec.triggers ?? []).map((trigger) => ({ ...trigger, events: [...trigger.events] })),
  });
}

/** Throws a `TypeError` naming the first malformed field of `spec`. */
export function assertTableSpec(spec: TableSpec): void {
  const where = `TableSpec ${typeof spec?.name === 'string' ? spec.name : '?'}`;
  const fail = (field: string): never => {
    throw new TypeError(`${where}: invalid ${field}`);
  };
  if (typeof spec !== 'object' || spec === null) fail('spec');
  if (!isPostgresIdentifier(spec.name)) fail('name (must match ^[a-z_][a-z0-9_]{0,62}$)');
  if (!Array.isArray(spec.columns) || spec.columns.length === 0) fail('columns');
  for (const column of spec.columns) {
    if (!isName(column?.name) || !isName(column.type) || typeof column.nullable !== 'boolean') fail(`column ${String(column?.name)}`);
    if (column.default !== undefined && column.default !== null && !isName(column.default)) fail(`column ${column.name} default`);
    if (column.collation !== undefined && !isName(column.collation)) fail(`column ${column.name} collation`);
    if (column.generated !== undefined && column.generated !== null && !isName(column.generated)) fail(`column ${column.name} generated`);
  }
  assertUniqueNames(spec.columns, 'column', fail);
  if (!isNameList(spec.primaryKey, 0)) fail('primaryKey');
  for (const unique of spec.uniques ?? []) if (!isName(unique?.name) || !isNameList(unique.columns, 1)) fail(`unique ${String(unique?.name)}`);
  for (const index of spec.indexes ?? []) {
    const ok = isName(index?.name) && isNameList(index.columns, 1) && typeof index.unique === 'boolean' && isName(index.method);
    if (!ok || (index.predicate !== undefined && !isName(index.predicate))) fail(`index ${String(index?.name)}`);
  }
  // a unique index is looked up by name among uniques and indexes alike, so the names share one space
  assertUniqueNames([...(spec.uniques ?? []), ...(spec.indexes ?? [])], 'unique/index', fail);
  for (const check of spec.checks ?? []) {
    if (!isName(check?.name) || (check.expression !== undefined && !isName(check.expression))) fail(`check ${String(check?.name)}`);
  }
  assertUniqueNames(spec.checks ?? [], 'check', fail);
  for (const fk of spec.foreignKeys ?? []) {
    const ok =
      isName(fk?.name) &&
      isNameList(fk.columns, 1) &&
      isName(fk.references?.table) &&
      isNameList(fk.references.columns, 1) &&
      FOREIGN_KEY_ACTIONS.includes(fk.onDelete);
    if (!ok) fail(`foreign key ${String(fk?.name)}`);
  }
  assertUniqueNames(spec.foreignKeys ?? [], 'foreign key', fail);
  const fingerprints = new Map<string, string>();
  for (const trigger of spec.triggers ?? []) {
    const ok =
      isName(trigger?.name) &&
      TRIGGER_TIMINGS.includes(trigger.timing) &&
      Array.isArray(trigger.events) &&
      trigger.events.length > 0 &&
      trigger.events.every((event) => TRIGGER_EVENTS.includes(event)) &&
      new Set(trigger.events).size === trigger.events.length &&
      TRIGGER_LEVELS.includes(trigger.level) &&
      // Postgres fires TRUNCATE triggers only per statement
      !(trigger.level === 'row' && trigger.events.includes('truncate')) &&
      isPostgresIdentifier(trigger.function) &&
      typeof trigger.functionFingerprint === 'string' &&
      FINGERPRINT.test(trigger.functionFingerprint) &&
      (fingerprints.get(trigger.function) ?? trigger.functionFingerprint) === trigger.functionFingerprint;
    if (!ok) fail(`trigger ${String(trigger?.name)}`);
    fingerprints.set(trigger.function, trigger.functionFingerprint);
  }
  assertUniqueNames(spec.triggers ?? [], 'trigger', fail);
}

function isName(value: unknown): value is string {
  return typeof value === 'string' && value.trim().length > 0;
}

function isNameList(value: unknown, minLength: number): value is readonly string[] {
  return Array.isArray(value) && value.length >= minLength && value.every(isName);
}

function assertUniqueNames(items: readonly { readonly name: string }[], kind: string, fail: (field: string) => never): void {
  const seen = new Set<string>();
  for (const { name } of items) {
    if (seen.has(name)) fail(`${kind} ${name} (declared twice)`);
    seen.add(name);
  }
}
