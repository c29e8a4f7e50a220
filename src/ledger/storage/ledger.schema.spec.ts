import { createLedgerMigration } from './ledger-migration';
import { qualifiedTable } from '../../database/qualified-table';
import { ledgerStatements } from './ledger-sql';
import { DEFAULT_LEDGER_TABLE, isLedgerTableName, LEDGER_TABLE_SPEC, ledgerTableSpec } from './ledger.schema';

describe('ledger TableSpec', () => {
  it('declares the columns of spec 04 §2 in order, with the primary key on id', () => {
    expect(LEDGER_TABLE_SPEC.name).toBe(DEFAULT_LEDGER_TABLE);
    expect(LEDGER_TABLE_SPEC.columns.map((c) => `${c.name} ${c.type}${c.nullable ? '' : ' not null'}`)).toEqual([
      'id text not null',
      'format integer not null',
      'workflow_id text not null',
      'workflow_version text not null',
      'kind text not null',
      'checkpoint jsonb not null',
      'phase text not null',
      'outcome jsonb',
      'owner_token uuid',
      'owner_instance text',
      'lease_until_ms bigint not null',
      'revision bigint not null',
      'created_at_ms bigint not null',
      'updated_at_ms bigint not null',
    ]);
    expect(LEDGER_TABLE_SPEC.primaryKey).toEqual(['id']);
    expect(Object.isFrozen(LEDGER_TABLE_SPEC.columns[0])).toBe(true);
  });

  it('derives constraint and index names from the table name', () => {
    const spec = ledgerTableSpec('billing');
    expect(spec.checks?.map((c) => c.name)).toEqual(['billing_format_check', 'billing_phase_check', 'billing_owner_check', 'billing_counters_check']);
    expect(spec.indexes?.map((i) => i.name)).toEqual(['billing_running_lease_idx', 'billing_owner_instance_idx']);
  });

  it('accepts table names whose derived names fit in 63 characters', () => {
    expect(isLedgerTableName('a'.repeat(44))).toBe(true);
    expect(`${'a'.repeat(44)}_owner_instance_idx`).toHaveLength(63);
    for (const bad of ['a'.repeat(45), 'A', '1a', 'a-b', '', 'a"b']) {
      expect(isLedgerTableName(bad)).toBe(false);
      expect(() => ledgerTableSpec(bad)).toThrow(TypeError);
    }
  });
});

describe('createLedgerMigration', () => {
  it('names the migration after the table, ending in the 13-digit timestamp TypeORM requires', () => {
    const Migration = createLedgerMigration('billing_invocations');
    expect(new Migration().name).toBe('InvocationLedger_billing_invocations1764500000000');
    expect(new (createLedgerMigration('t', 1799999999999))().name).toBe('InvocationLedger_t1799999999999');
  });

  it('refuses the default table, invalid names and timestamps', () => {
    expect(() => createLedgerMigration(DEFAULT_LEDGER_TABLE)).toThrow(TypeError);
    expect(() => createLedgerMigration('Bad')).toThrow(TypeError);
    expect(() => createLedgerMigration('t', 123)).toThrow(TypeError);
  });
});

describe('ledger statements', () => {
  it('quote the (validated) schema and table in every statement', () => {
    expect(qualifiedTable(null, 'ledger')).toBe('"ledger"');
    expect(qualifiedTable('tenant', 'ledger')).toBe('"tenant"."ledger"');
    const statements = ledgerStatements('"tenant"."ledger"');
    for (const sql of Object.values(statements)) expect(sql).toContain('"tenant"."ledger"');
    expect(Object.isFrozen(statements)).toBe(true);
  });
});
