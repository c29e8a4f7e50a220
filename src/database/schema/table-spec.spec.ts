import { assertTableSpec, defineTableSpec, isPostgresIdentifier, type TableSpec } from './table-spec';

const columns = [{ name: 'id', type: 'text', nullable: false }];
const base: TableSpec = { name: 'widgets', columns, primaryKey: ['id'] };

describe('TableSpec declaration', () => {
  it('defineTableSpec returns a deep-frozen copy with the optional lists filled in', () => {
    const source = {
      ...base,
      columns: [...columns],
      foreignKeys: [{ name: 'fk', columns: ['id'], references: { table: 'other', columns: ['id'] }, onDelete: 'cascade' as const }],
    };
    const spec = defineTableSpec(source);
    expect(spec).not.toBe(source);
    expect(spec.uniques).toEqual([]);
    expect(spec.indexes).toEqual([]);
    expect(spec.checks).toEqual([]);
    expect(Object.isFrozen(spec)).toBe(true);
    expect(Object.isFrozen(spec.columns[0])).toBe(true);
    expect(Object.isFrozen(spec.foreignKeys?.[0].references.columns)).toBe(true);
    source.columns.push({ name: 'later', type: 'text', nullable: true });
    expect(spec.columns).toHaveLength(1);
  });

  it('table names must match ^[a-z_][a-z0-9_]{0,62}$', () => {
    for (const name of ['Widgets', 'widgets; drop table x', '1widgets', 'w'.repeat(64), '', 'a-b', 'pg.temp']) {
      expect(isPostgresIdentifier(name)).toBe(false);
      expect(() => defineTableSpec({ ...base, name })).toThrow(TypeError);
    }
    for (const name of ['_x', 'agent_runtime_invocations', 'w'.repeat(63)]) expect(isPostgresIdentifier(name)).toBe(true);
  });

  it('refuses malformed fields with a TypeError naming them', () => {
    expect(() => assertTableSpec({ ...base, columns: [] })).toThrow(/columns/);
    expect(() => assertTableSpec({ ...base, columns: [{ name: 'id', type: '', nullable: false }] })).toThrow(/column id/);
    expect(() => assertTableSpec({ ...base, primaryKey: [''] })).toThrow(/primaryKey/);
    expect(() => assertTableSpec({ ...base, indexes: [{ name: 'i', columns: [], unique: false, method: 'btree' }] })).toThrow(/index i/);
    const badAction = { name: 'fk', columns: ['id'], references: { table: 't', columns: ['id'] }, onDelete: 'CASCADE' };
    expect(() => assertTableSpec({ ...base, foreignKeys: [badAction as never] })).toThrow(/foreign key fk/);
  });

  it('accepts triggers and copies them frozen; refuses malformed ones naming them', () => {
    const trigger = { name: 't', timing: 'before', events: ['update', 'delete'], level: 'row', function: 'f', functionFingerprint: 'a'.repeat(64) } as const;
    const spec = defineTableSpec({ ...base, triggers: [trigger] });
    expect(spec.triggers).toEqual([trigger]);
    expect(Object.isFrozen(spec.triggers?.[0].events)).toBe(true);
    expect(defineTableSpec(base).triggers).toEqual([]);
    for (const bad of [
      { timing: 'BEFORE' },
      { events: [] },
      { events: ['update', 'update'] },
      { events: ['upsert'] },
      { level: 'each' },
      { events: ['truncate'], level: 'row' },
      { function: 'public.f' },
      { functionFingerprint: 'A'.repeat(64) },
      { functionFingerprint: 'a'.repeat(63) },
    ]) {
      expect(() => assertTableSpec({ ...base, triggers: [{ ...trigger, ...bad } as never] })).toThrow(/trigger t/);
    }
    expect(() => assertTableSpec({ ...base, triggers: [trigger, { ...trigger, name: 'u', functionFingerprint: 'b'.repeat(64) }] })).toThrow(/trigger u/);
    expect(() => assertTableSpec({ ...base, triggers: [trigger, trigger] })).toThrow(/trigger t \(declared twice\)/);
  });

  it('refuses a name declared twice, uniques and indexes sharing one name space', () => {
    expect(() => assertTableSpec({ ...base, columns: [...columns, ...columns] })).toThrow(/column id \(declared twice\)/);
    expect(() =>
      assertTableSpec({
        ...base,
        uniques: [{ name: 'k', columns: ['id'] }],
        indexes: [{ name: 'k', columns: ['id'], unique: true, method: 'btree' }],
      }),
    ).toThrow(/declared twice/);
  });
});
