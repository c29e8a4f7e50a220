import fc from 'fast-check';
import type { CatalogColumn, CatalogIndex, CatalogTable } from './schema-catalog.types';
import { compareMigrations, compareSettings, compareTable } from './schema-comparison';
import { defineTableSpec, type TableSpec } from './table-spec';

const spec: TableSpec = defineTableSpec({
  name: 'things',
  columns: [
    { name: 'id', type: 'text', nullable: false },
    { name: 'phase', type: 'text', nullable: false, default: "'ready'::text" },
    { name: 'lease', type: 'bigint', nullable: false },
  ],
  primaryKey: ['id'],
  indexes: [{ name: 'things_lease_idx', columns: ['lease'], unique: false, method: 'btree', predicate: "phase = 'running'::text" }],
  checks: [{ name: 'things_lease_check', expression: 'lease >= 0' }],
});

const index = (over: Partial<CatalogIndex> = {}): CatalogIndex => ({
  name: 'things_lease_idx',
  method: 'btree',
  unique: false,
  primary: false,
  exclusion: false,
  valid: true,
  columns: ['lease'],
  predicate: "(phase = 'running'::text)",
  ...over,
});

function matching(): CatalogTable {
  return {
    relation: { oid: '1', relkind: 'r', persistence: 'p' },
    shadow: null,
    columns: [
      { name: 'lease', type: 'bigint', notNull: true, default: null, generated: null, collation: null },
      { name: 'id', type: 'text', notNull: true, default: null, generated: null, collation: 'default' },
      { name: 'phase', type: 'text', notNull: true, default: "'ready'::text", generated: null, collation: 'default' },
    ],
    indexes: [index(), index({ name: 'things_pkey', unique: true, primary: true, columns: ['id'], predicate: null })],
    constraints: [
      { name: 'things_pkey', type: 'p', validated: true, columns: ['id'], checkExpression: null, referencedSchema: null, referencedTable: null, referencedColumns: [], onDelete: null },
      {
        name: 'things_lease_check',
        type: 'c',
        validated: true,
        columns: ['lease'],
        checkExpression: '(lease >= 0)',
        referencedSchema: null,
        referencedTable: null,
        referencedColumns: [],
        onDelete: null,
      },
    ],
    triggers: [],
  };
}

describe('compareTable', () => {
  it('finds nothing when the catalog matches, whatever the column order', () => {
    expect(compareTable(spec, matching(), 'public')).toEqual([]);
  });

  it('a missing table stops the checks of that table', () => {
    expect(compareTable(spec, { ...matching(), relation: null }, 'public')).toEqual([
      { table: 'things', property: 'table', expected: 'present', actual: 'missing' },
    ]);
  });

  it('a temp shadow is a persistence mismatch beside the real table', () => {
    const shadowed = { ...matching(), shadow: { oid: '2', relkind: 'r', persistence: 't' } };
    expect(compareTable(spec, shadowed, 'public')).toEqual([
      { table: 'things', property: 'persistence', expected: 'permanent', actual: 'temporary' },
    ]);
  });

  it('extra non-unique indexes are tolerated, extra unique and exclusion indexes are not', () => {
    const table = matching();
    const extra = [
      index({ name: 'zz_plain', predicate: null }),
      index({ name: 'b_unique', unique: true, predicate: null }),
      index({ name: 'a_excl', method: 'gist', exclusion: true, predicate: null }),
    ];
    expect(compareTable(spec, { ...table, indexes: [...table.indexes, ...extra] }, 'public')).toEqual([
      { table: 'things', property: 'unique:b_unique', expected: 'absent', actual: 'unique (lease)' },
      { table: 'things', property: 'index:a_excl', expected: 'absent', actual: 'exclusion gist (lease)' },
    ]);
  });

  it('reports every injected difference under the property it belongs to', () => {
    const injections: [string, (table: CatalogTable) => CatalogTable][] = [
      ['column:lease', (t) => ({ ...t, columns: t.columns.map((c) => (c.name === 'lease' ? { ...c, type: 'integer' } : c)) })],
      ['column:phase', (t) => ({ ...t, columns: t.columns.map((c) => (c.name === 'phase' ? { ...c, notNull: false } : c)) })],
      ['column:phase', (t) => ({ ...t, columns: t.columns.map((c) => (c.name === 'phase' ? { ...c, default: null } : c)) })],
      ['column:extra', (t) => ({ ...t, columns: [...t.columns, { ...(t.columns[0] as CatalogColumn), name: 'extra' }] })],
      ['index:things_lease_idx', (t) => ({ ...t, indexes: t.indexes.map((i) => (i.primary ? i : { ...i, predicate: null })) })],
      ['index:things_lease_idx', (t) => ({ ...t, indexes: t.indexes.map((i) => (i.primary ? i : { ...i, columns: ['lease', 'id'] })) })],
      ['index:things_lease_idx', (t) => ({ ...t, indexes: t.indexes.map((i) => (i.primary ? i : { ...i, valid: false })) })],
      ['primary_key', (t) => ({ ...t, constraints: t.constraints.filter((c) => c.type !== 'p') })],
      ['check:things_lease_check', (t) => ({ ...t, constraints: t.constraints.map((c) => (c.type === 'c' ? { ...c, checkExpression: '(lease > 0)' } : c)) })],
      ['persistence', (t) => ({ ...t, relation: { oid: '1', relkind: t.relation?.relkind ?? 'r', persistence: 'u' } })],
      ['relkind', (t) => ({ ...t, relation: { oid: '1', relkind: 'p', persistence: t.relation?.persistence ?? 'p' } })],
    ];
    fc.assert(
      fc.property(fc.subarray(injections.map((_, i) => i), { minLength: 1 }), (chosen) => {
        const table = chosen.reduce((t, i) => injections[i][1](t), matching());
        const properties = compareTable(spec, table, 'public').map((m) => m.property);
        for (const i of chosen) expect(properties).toContain(injections[i][0]);
      }),
    );
  });
});

describe('compareSettings and compareMigrations', () => {
  it('synchronous_commit off is refused on every connection; other values pass without a required standby', () => {
    expect(compareSettings({ pooled: 'local', dedicated: ['off', 'on'], synchronousStandbyNames: '' }, false)).toEqual([
      { table: null, property: 'synchronous_commit', expected: 'not off', actual: 'off on dedicated connection 1' },
    ]);
  });

  it('a required standby needs a name and on, remote_write or remote_apply', () => {
    expect(compareSettings({ pooled: 'remote_apply', dedicated: [], synchronousStandbyNames: 'ANY 1 (s1)' }, true)).toEqual([]);
    expect(compareSettings({ pooled: 'off', dedicated: [], synchronousStandbyNames: ' ' }, true).map((m) => m.property)).toEqual([
      'synchronous_commit',
      'synchronous_standby_names',
    ]);
  });

  it('every registered migration without a row is pending, in registration order; unknown rows are tolerated', () => {
    expect(compareMigrations('m', ['B2', 'A1', 'C3'], new Set(['A1', 'Z9']))).toEqual([
      { table: 'm', property: 'migration:B2', expected: 'applied', actual: 'pending' },
      { table: 'm', property: 'migration:C3', expected: 'applied', actual: 'pending' },
    ]);
    expect(compareMigrations('m', ['A1'], null).map((m) => m.actual)).toEqual(['pending']);
  });
});
