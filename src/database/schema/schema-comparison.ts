import type { CatalogColumn, CatalogConstraint, CatalogFunction, CatalogIndex, CatalogTable } from './schema-catalog.types';
import {
  describeAsUnique,
  describeCheck,
  describeColumn,
  describeColumnSpec,
  describeForeignKey,
  describeForeignKeySpec,
  describeIndex,
  describeIndexSpec,
  expressionList,
  foreignKeyAction,
  list,
  persistenceName,
  relkindName,
} from './schema-descriptions';
import { normalizeSqlExpression, sameSqlExpression } from './sql-expression';
import { compareTriggers } from './trigger-comparison';
import type { ColumnSpec, ForeignKeySpec, IndexSpec, TableSpec } from './table-spec';

/** The `property` of a mismatch (spec 04 §1.3). */
export type SchemaMismatchProperty =
  | 'synchronous_commit'
  | 'synchronous_standby_names'
  | `migration:${string}`
  | 'table'
  | 'relkind'
  | 'persistence'
  | `column:${string}`
  | 'primary_key'
  | `unique:${string}`
  | `index:${string}`
  | `check:${string}`
  | `foreign_key:${string}`
  | `trigger:${string}`
  | `function:${string}`;

/**
 * One difference between a declaration and the catalog: short descriptive strings taken from the
 * catalog, never row data. `table` is `null` for server settings.
 */
export type SchemaMismatch = {
  readonly table: string | null;
  readonly property: SchemaMismatchProperty;
  readonly expected: string;
  readonly actual: string;
};

/** `synchronous_commit` as read on each connection, and the standby list of the server. */
export interface SettingsReading {
  readonly pooled: string;
  readonly dedicated: readonly string[];
  readonly synchronousStandbyNames: string;
}

const SYNCHRONOUS_STANDBY_LEVELS: readonly string[] = ['on', 'remote_write', 'remote_apply'];

/** `synchronous_commit` must not be `off`; with a required standby it must wait for it, and a standby must be named. */
export function compareSettings(reading: SettingsReading, requireSynchronousStandby: boolean): SchemaMismatch[] {
  const mismatches: SchemaMismatch[] = [];
  const connections = [
    { value: reading.pooled, where: '' },
    ...reading.dedicated.map((value, i) => ({ value, where: ` on dedicated connection ${i + 1}` })),
  ];
  for (const { value, where } of connections) {
    if (requireSynchronousStandby && !SYNCHRONOUS_STANDBY_LEVELS.includes(value)) {
      mismatches.push(mismatch(null, 'synchronous_commit', 'on, remote_write or remote_apply', value + where));
    } else if (value === 'off') {
      mismatches.push(mismatch(null, 'synchronous_commit', 'not off', value + where));
    }
  }
  if (requireSynchronousStandby && reading.synchronousStandbyNames.trim() === '') {
    mismatches.push(mismatch(null, 'synchronous_standby_names', 'non-empty', 'empty'));
  }
  return mismatches;
}

/** Every registered migration needs its row; `applied` is `null` when the migrations table is missing. */
export function compareMigrations(table: string, registered: readonly string[], applied: ReadonlySet<string> | null): SchemaMismatch[] {
  return registered.filter((name) => !applied?.has(name)).map((name) => mismatch(table, `migration:${name}`, 'applied', 'pending'));
}

/**
 * Every difference between one declared table and what the catalog holds under its name, in report
 * order; `functions` holds the trigger functions found in `schema`.
 */
export function compareTable(
  spec: TableSpec,
  actual: CatalogTable,
  schema: string | null,
  functions: ReadonlyMap<string, CatalogFunction> = new Map(),
): SchemaMismatch[] {
  const out: SchemaMismatch[] = [];
  const push = (property: SchemaMismatchProperty, expected: string, found: string): void => {
    out.push(mismatch(spec.name, property, expected, found));
  };
  const { relation, shadow } = actual;
  if (relation === null) push('table', 'present', 'missing');
  if (relation !== null && relation.relkind !== 'r') push('relkind', 'ordinary table', relkindName(relation.relkind));
  if (relation !== null && relation.persistence !== 'p') push('persistence', 'permanent', persistenceName(relation));
  if (shadow !== null) push('persistence', 'permanent', persistenceName(shadow));
  if (relation === null) return out;

  const columns = new Map(actual.columns.map((column) => [column.name, column]));
  for (const column of spec.columns) {
    const found = columns.get(column.name);
    if (!found) push(`column:${column.name}`, describeColumnSpec(column), 'missing');
    else if (!columnMatches(column, found)) push(`column:${column.name}`, describeColumnSpec(column), describeColumn(found, column));
  }
  const declaredColumns = new Set(spec.columns.map((column) => column.name));
  for (const column of byName(actual.columns.filter((c) => !declaredColumns.has(c.name)))) {
    push(`column:${column.name}`, 'absent', column.type);
  }

  const primaryKey = actual.constraints.find((constraint) => constraint.type === 'p');
  const expectedKey = spec.primaryKey.length === 0 ? 'none' : list(spec.primaryKey);
  const actualKey = primaryKey ? list(primaryKey.columns) : 'none';
  if (expectedKey !== actualKey) push('primary_key', expectedKey, actualKey);

  for (const group of [uniqueAndIndexMismatches(spec, actual.indexes), checkMismatches(spec, actual.constraints)]) {
    for (const { property, expected, found } of group) push(property, expected, found);
  }
  for (const { property, expected, found } of foreignKeyMismatches(spec, actual.constraints, schema)) push(property, expected, found);
  for (const found of compareTriggers(spec.triggers ?? [], actual.triggers, functions, schema)) push(found.property, found.expected, found.actual);
  return out;
}

interface NamedMismatch {
  readonly name: string;
  readonly property: SchemaMismatchProperty;
  readonly expected: string;
  readonly found: string;
}

function uniqueAndIndexMismatches(spec: TableSpec, indexes: readonly CatalogIndex[]): NamedMismatch[] {
  const pool = new Map(indexes.filter((index) => !index.primary).map((index) => [index.name, index]));
  const uniques: NamedMismatch[] = [];
  const others: NamedMismatch[] = [];
  for (const unique of spec.uniques ?? []) {
    const expected = `unique ${expressionList(unique.columns)}`;
    const found = pool.get(unique.name);
    const actual = found === undefined ? 'missing' : !found.valid ? 'invalid' : describeAsUnique(found);
    if (actual !== expected) uniques.push({ name: unique.name, property: `unique:${unique.name}`, expected, found: actual });
  }
  for (const index of spec.indexes ?? []) {
    const found = pool.get(index.name);
    const actual = found === undefined ? 'missing' : !found.valid ? 'invalid' : indexMatches(index, found) ? null : describeIndex(found);
    if (actual !== null) others.push({ name: index.name, property: `index:${index.name}`, expected: describeIndexSpec(index), found: actual });
  }
  const declared = new Set([...(spec.uniques ?? []), ...(spec.indexes ?? [])].map((item) => item.name));
  for (const index of pool.values()) {
    if (declared.has(index.name)) continue;
    // extra unique and exclusion indexes change which writes succeed; extra plain indexes only speed reads
    if (index.unique && !index.exclusion) uniques.push({ name: index.name, property: `unique:${index.name}`, expected: 'absent', found: describeAsUnique(index) });
    else if (index.exclusion) others.push({ name: index.name, property: `index:${index.name}`, expected: 'absent', found: describeIndex(index) });
  }
  return [...byName(uniques), ...byName(others)];
}

function checkMismatches(spec: TableSpec, constraints: readonly CatalogConstraint[]): NamedMismatch[] {
  const actual = new Map(constraints.filter((c) => c.type === 'c').map((c) => [c.name, c]));
  const out: NamedMismatch[] = [];
  for (const check of spec.checks ?? []) {
    const found = actual.get(check.name);
    const expected = check.expression === undefined ? 'present' : `check (${normalizeSqlExpression(check.expression)})`;
    const property = `check:${check.name}` as const;
    if (!found) out.push({ name: check.name, property, expected, found: 'missing' });
    else if (!found.validated) out.push({ name: check.name, property, expected, found: 'invalid' });
    else if (check.expression !== undefined && !sameSqlExpression(check.expression, found.checkExpression ?? '')) {
      out.push({ name: check.name, property, expected, found: describeCheck(found) });
    }
  }
  const declared = new Set((spec.checks ?? []).map((check) => check.name));
  for (const found of actual.values()) {
    if (!declared.has(found.name)) out.push({ name: found.name, property: `check:${found.name}`, expected: 'absent', found: describeCheck(found) });
  }
  return byName(out);
}

function foreignKeyMismatches(spec: TableSpec, constraints: readonly CatalogConstraint[], schema: string | null): NamedMismatch[] {
  const actual = new Map(constraints.filter((c) => c.type === 'f').map((c) => [c.name, c]));
  const out: NamedMismatch[] = [];
  for (const fk of spec.foreignKeys ?? []) {
    const found = actual.get(fk.name);
    const expected = describeForeignKeySpec(fk);
    const property = `foreign_key:${fk.name}` as const;
    if (!found) out.push({ name: fk.name, property, expected, found: 'missing' });
    else if (!found.validated) out.push({ name: fk.name, property, expected, found: 'invalid' });
    else if (!foreignKeyMatches(fk, found, schema)) out.push({ name: fk.name, property, expected, found: describeForeignKey(found, schema) });
  }
  const declared = new Set((spec.foreignKeys ?? []).map((fk) => fk.name));
  for (const found of actual.values()) {
    if (!declared.has(found.name)) {
      out.push({ name: found.name, property: `foreign_key:${found.name}`, expected: 'absent', found: describeForeignKey(found, schema) });
    }
  }
  return byName(out);
}

function columnMatches(spec: ColumnSpec, actual: CatalogColumn): boolean {
  return describeColumnSpec(spec) === describeColumn(actual, spec);
}

function indexMatches(spec: IndexSpec, actual: CatalogIndex): boolean {
  return (
    !actual.exclusion &&
    spec.unique === actual.unique &&
    spec.method === actual.method &&
    spec.columns.length === actual.columns.length &&
    spec.columns.every((column, i) => sameSqlExpression(column, actual.columns[i])) &&
    (spec.predicate === undefined ? actual.predicate === null : actual.predicate !== null && sameSqlExpression(spec.predicate, actual.predicate))
  );
}

function foreignKeyMatches(spec: ForeignKeySpec, actual: CatalogConstraint, schema: string | null): boolean {
  const table = spec.references.table.includes('.')
    ? `${actual.referencedSchema}.${actual.referencedTable}` === spec.references.table
    : actual.referencedSchema === schema && actual.referencedTable === spec.references.table;
  return (
    table &&
    list(spec.columns) === list(actual.columns) &&
    list(spec.references.columns) === list(actual.referencedColumns) &&
    spec.onDelete === foreignKeyAction(actual.onDelete)
  );
}

function byName<T extends { readonly name: string }>(items: readonly T[]): T[] {
  return [...items].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function mismatch(table: string | null, property: SchemaMismatchProperty, expected: string, actual: string): SchemaMismatch {
  return Object.freeze({ table, property, expected, actual });
}
