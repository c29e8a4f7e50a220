import type { CatalogColumn, CatalogConstraint, CatalogIndex, CatalogRelation } from './schema-catalog.types';
import { normalizeSqlExpression } from './sql-expression';
import type { ColumnSpec, ForeignKeySpec, IndexSpec } from './table-spec';

/*
 * The text forms a schema report shows for what was declared and what the catalog holds (spec 04
 * §1.3): the same words on both sides, so two forms are equal exactly when the objects match.
 */

/** The declared aspects of a column: type and nullability always, default/collation/generation when declared. */
export function describeColumnSpec(spec: ColumnSpec): string {
  return describeColumnAspects(spec, {
    type: spec.type,
    notNull: !spec.nullable,
    default: spec.default ?? null,
    collation: spec.collation ?? null,
    generated: spec.generated ?? null,
  });
}

/** The same aspects as {@link describeColumnSpec}, read from the catalog. */
export function describeColumn(actual: CatalogColumn, spec: ColumnSpec): string {
  return describeColumnAspects(spec, actual);
}

function describeColumnAspects(
  declared: ColumnSpec,
  value: Pick<CatalogColumn, 'type' | 'notNull' | 'default' | 'collation' | 'generated'>,
): string {
  let text = `${normalizeSqlExpression(value.type)} ${value.notNull ? 'not null' : 'null'}`;
  if (declared.default !== undefined) text += value.default === null ? ' no default' : ` default ${normalizeSqlExpression(value.default)}`;
  if (declared.collation !== undefined) text += ` collate ${value.collation ?? 'none'}`;
  if (declared.generated !== undefined) {
    text += value.generated === null ? ' not generated' : ` generated as (${normalizeSqlExpression(value.generated)})`;
  }
  return text;
}


/** A declared index in the form of {@link describeIndex}. */
export function describeIndexSpec(spec: IndexSpec): string {
  const where = spec.predicate === undefined ? '' : ` where ${normalizeSqlExpression(spec.predicate)}`;
  return `${spec.unique ? 'unique ' : ''}${spec.method} ${expressionList(spec.columns)}${where}`;
}

/** `[unique |exclusion ]<method> (<key columns>)[ where <predicate>]` */
export function describeIndex(index: CatalogIndex): string {
  const kind = index.exclusion ? 'exclusion ' : index.unique ? 'unique ' : '';
  const where = index.predicate === null ? '' : ` where ${normalizeSqlExpression(index.predicate)}`;
  return `${kind}${index.method} ${expressionList(index.columns)}${where}`;
}

/** A unique index as a declared unique constraint reads (`unique (<columns>)`); any other index as {@link describeIndex}. */
export function describeAsUnique(index: CatalogIndex): string {
  if (!index.unique || index.exclusion) return describeIndex(index);
  const where = index.predicate === null ? '' : ` where ${normalizeSqlExpression(index.predicate)}`;
  return `unique ${expressionList(index.columns)}${where}`;
}

/** `check (<normalised expression>)` */
export function describeCheck(constraint: CatalogConstraint): string {
  return `check (${normalizeSqlExpression(constraint.checkExpression ?? '')})`;
}


/** `(<columns>) references <table> (<columns>) on delete <action>` as declared. */
export function describeForeignKeySpec(fk: ForeignKeySpec): string {
  return `${list(fk.columns)} references ${fk.references.table} ${list(fk.references.columns)} on delete ${fk.onDelete}`;
}

/** The referenced table is qualified only when it lives outside `schema`. */
export function describeForeignKey(constraint: CatalogConstraint, schema: string | null): string {
  const table =
    constraint.referencedSchema === schema ? constraint.referencedTable : `${constraint.referencedSchema}.${constraint.referencedTable}`;
  return `${list(constraint.columns)} references ${table} ${list(constraint.referencedColumns)} on delete ${foreignKeyAction(constraint.onDelete)}`;
}

const FOREIGN_KEY_ACTIONS: Readonly<Record<string, string>> = { a: 'no action', r: 'restrict', c: 'cascade', n: 'set null', d: 'set default' };

/** The name of a `pg_constraint.confdeltype` letter. */
export function foreignKeyAction(letter: string | null): string {
  return FOREIGN_KEY_ACTIONS[letter ?? ''] ?? 'unknown';
}

const RELKINDS: Readonly<Record<string, string>> = {
  r: 'ordinary table',
  p: 'partitioned table',
  v: 'view',
  m: 'materialized view',
  f: 'foreign table',
  S: 'sequence',
  i: 'index',
  I: 'partitioned index',
  c: 'composite type',
  t: 'TOAST table',
};

/** The name of a `pg_class.relkind` letter. */
export function relkindName(relkind: string): string {
  return RELKINDS[relkind] ?? `relkind ${relkind}`;
}

/** `permanent`, `unlogged` or `temporary`. */
export function persistenceName(relation: CatalogRelation): string {
  return relation.persistence === 'u' ? 'unlogged' : relation.persistence === 't' ? 'temporary' : 'permanent';
}

/** `(a, b)` */
export function list(names: readonly string[]): string {
  return `(${names.join(', ')})`;
}

/** `(a, b)` of normalised SQL expressions. */
export function expressionList(expressions: readonly string[]): string {
  return list(expressions.map(normalizeSqlExpression));
}
