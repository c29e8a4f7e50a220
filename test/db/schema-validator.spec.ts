import { createServer, Socket, type AddressInfo, type Server } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { DataSource, type Logger, type MigrationInterface } from 'typeorm';
import { AGENT_RUNTIME_MIGRATIONS } from '../../migrations';
import { createAgentRuntimeDataSource } from '../../src/database/data-source.factory';
import { AGENT_RUNTIME_MIGRATIONS_TABLE as MIGRATIONS_TABLE } from '../../src/database/migration-groups';
import { SchemaValidatorError } from '../../src/database/schema-validator.errors';
import { assertSchema, validateSchema, type SchemaReport } from '../../src/database/schema/schema-validator';
import type { SchemaMismatch } from '../../src/database/schema/schema-comparison';
import { defineTableSpec, type TableSpec } from '../../src/database/schema/table-spec';
import { AgentRuntimeError, type ErrorDetails } from '../../src/shared/errors/agent-runtime-error';
import { fingerprintFunction } from '../../src/database/schema/trigger-comparison';
import { createFreshDatabase, type FreshDatabase } from '../support/fresh-database';

const WIDGETS_SQL = `
  CREATE TABLE widgets (
    id text NOT NULL,
    format integer NOT NULL DEFAULT 1,
    phase text NOT NULL DEFAULT 'ready',
    owner text,
    lease_until_ms bigint NOT NULL DEFAULT 0,
    tags jsonb NOT NULL DEFAULT '[]',
    name text COLLATE "C" NOT NULL,
    name_length integer GENERATED ALWAYS AS (length(name)) STORED,
    code character(64),
    CONSTRAINT widgets_pkey PRIMARY KEY (id),
    CONSTRAINT widgets_name_key UNIQUE (name),
    CONSTRAINT widgets_format_check CHECK (format = 1),
    CONSTRAINT widgets_phase_check CHECK (phase IN ('ready', 'running'))
  );
  CREATE INDEX widgets_running_lease_idx ON widgets (lease_until_ms, phase) WHERE phase = 'running';
  CREATE INDEX widgets_tags_idx ON widgets USING gin (tags);
  CREATE UNIQUE INDEX widgets_lower_code_idx ON widgets (lower(code));
  CREATE TABLE widget_parts (
    widget_id text NOT NULL,
    part integer NOT NULL,
    CONSTRAINT widget_parts_pkey PRIMARY KEY (widget_id, part),
    CONSTRAINT widget_parts_widget_fkey FOREIGN KEY (widget_id) REFERENCES widgets (id) ON DELETE CASCADE
  );`;

const WIDGETS: TableSpec = defineTableSpec({
  name: 'widgets',
  columns: [
    { name: 'id', type: 'text', nullable: false },
    { name: 'format', type: 'integer', nullable: false, default: '1' },
    { name: 'phase', type: 'text', nullable: false, default: "'ready'::text" },
    { name: 'owner', type: 'text', nullable: true, default: null },
    { name: 'lease_until_ms', type: 'bigint', nullable: false, default: '0' },
    { name: 'tags', type: 'jsonb', nullable: false, default: "'[]'::jsonb" },
    { name: 'name', type: 'text', nullable: false, collation: 'C' },
    { name: 'name_length', type: 'integer', nullable: true, generated: 'length(name)' },
    { name: 'code', type: 'character(64)', nullable: true },
  ],
  primaryKey: ['id'],
  uniques: [{ name: 'widgets_name_key', columns: ['name'] }],
  indexes: [
    { name: 'widgets_running_lease_idx', columns: ['lease_until_ms', 'phase'], unique: false, method: 'btree', predicate: "phase = 'running'::text" },
    { name: 'widgets_tags_idx', columns: ['tags'], unique: false, method: 'gin' },
    { name: 'widgets_lower_code_idx', columns: ['lower((code)::text)'], unique: true, method: 'btree' },
  ],
  checks: [
    { name: 'widgets_format_check', expression: 'format = 1' },
    { name: 'widgets_phase_check', expression: "(phase = ANY (ARRAY['ready'::text, 'running'::text]))" },
  ],
});

const WIDGET_PARTS: TableSpec = defineTableSpec({
  name: 'widget_parts',
  columns: [
    { name: 'widget_id', type: 'text', nullable: false },
    { name: 'part', type: 'integer', nullable: false },
  ],
  primaryKey: ['widget_id', 'part'],
  foreignKeys: [{ name: 'widget_parts_widget_fkey', columns: ['widget_id'], references: { table: 'widgets', columns: ['id'] }, onDelete: 'cascade' }],
});

const SPECS = [WIDGETS, WIDGET_PARTS];

/** A module error class as the ledger, eval store or service bundle would declare it. */
class SampleModuleError extends AgentRuntimeError<'schema_mismatch'> {
  constructor(code: 'schema_mismatch', details?: ErrorDetails) {
    super('SampleModuleError', code, details);
  }
}

class NeverApplied1799999999999 implements MigrationInterface {
  name = 'NeverApplied1799999999999';
  async up(): Promise<void> {}
  async down(): Promise<void> {}
}

let database: FreshDatabase;
let admin: Client;
const openDataSources: DataSource[] = [];

beforeEach(async () => {
  database = await createFreshDatabase();
  admin = new Client({ connectionString: database.url });
  admin.on('error', () => {});
  await admin.connect();
});

afterEach(async () => {
  for (const dataSource of openDataSources.splice(0)) if (dataSource.isInitialized) await dataSource.destroy();
  await admin.end().catch(() => {});
  await database.drop();
});

async function openDataSource(overrides: Parameters<typeof createAgentRuntimeDataSource>[1] = {}, url = database.url): Promise<DataSource> {
  const dataSource = createAgentRuntimeDataSource(url, overrides);
  openDataSources.push(dataSource);
  await dataSource.initialize();
  return dataSource;
}

async function validate(specs: readonly TableSpec[] = SPECS, options = {}): Promise<SchemaReport> {
  return validateSchema(await openDataSource(), specs, options);
}

const sql = (text: string): Promise<unknown> => admin.query(text);
const only = (report: SchemaReport, table: string | null): SchemaMismatch[] => report.mismatches.filter((m) => m.table === table);

describe('§1.2 declaration (TableSpec)', () => {
  it('a migrated schema that matches every declared column, key, unique, index, check and foreign key gives ok and no mismatches', async () => {
    await sql(WIDGETS_SQL);
    const report = await validate();
    expect(report).toEqual({ ok: true, mismatches: [] });
  });

  it('default, collation and generation are compared only when declared', async () => {
    await sql(WIDGETS_SQL);
    await sql(`ALTER TABLE widgets ALTER COLUMN lease_until_ms SET DEFAULT 5`);
    const relaxed = defineTableSpec({
      ...WIDGETS,
      columns: WIDGETS.columns.map(({ name, type, nullable }) => ({ name, type, nullable })),
    });
    const report = await validate([relaxed, WIDGET_PARTS]);
    expect(report.mismatches).toEqual([]);
  });

  it('expressions are compared after normalisation: whitespace and enclosing parentheses do not matter', async () => {
    await sql(WIDGETS_SQL);
    const spaced = defineTableSpec({
      ...WIDGETS,
      indexes: (WIDGETS.indexes ?? []).map((index) =>
        index.predicate ? { ...index, predicate: "(  phase =   'running'::text )" } : index,
      ),
      checks: [
        { name: 'widgets_format_check', expression: '((format = 1))' },
        { name: 'widgets_phase_check', expression: "phase = ANY (ARRAY['ready'::text,   'running'::text])" },
      ],
    });
    expect((await validate([spaced, WIDGET_PARTS])).mismatches).toEqual([]);
  });

  it('tables are resolved in the schema option, default current_schema()', async () => {
    await sql(`CREATE SCHEMA other; SET search_path = other; ${WIDGETS_SQL}`);
    expect((await validate(SPECS, { schema: 'other' })).ok).toBe(true);
    expect((await validate(SPECS)).mismatches.map((m) => m.property)).toEqual(['table', 'table']);
    expect((await validate([WIDGETS], { schema: 'no_such_schema' })).mismatches).toEqual([
      { table: 'widgets', property: 'table', expected: 'present', actual: 'missing' },
    ]);
  });
});

describe('§1.3 what counts as a mismatch', () => {
  describe('table, relkind, persistence', () => {
    it('a missing table is reported once, with no further checks on it', async () => {
      await sql(WIDGETS_SQL);
      await sql('DROP TABLE widget_parts');
      const report = await validate();
      expect(report.ok).toBe(false);
      expect(report.mismatches).toEqual([{ table: 'widget_parts', property: 'table', expected: 'present', actual: 'missing' }]);
    });

    it('a view of the declared name is reported as the wrong relkind', async () => {
      await sql(WIDGETS_SQL);
      await sql('DROP TABLE widget_parts; CREATE VIEW widget_parts AS SELECT id AS widget_id, format AS part FROM widgets');
      const report = await validate();
      expect(only(report, 'widget_parts')[0]).toEqual({ table: 'widget_parts', property: 'relkind', expected: 'ordinary table', actual: 'view' });
    });

    it('an UNLOGGED table is refused', async () => {
      await sql(WIDGETS_SQL);
      await sql('DROP TABLE widget_parts');
      await sql('CREATE UNLOGGED TABLE widget_parts (widget_id text NOT NULL, part integer NOT NULL, CONSTRAINT widget_parts_pkey PRIMARY KEY (widget_id, part))');
      const report = await validate([WIDGETS, { ...WIDGET_PARTS, foreignKeys: [] }]);
      expect(report.mismatches).toEqual([{ table: 'widget_parts', property: 'persistence', expected: 'permanent', actual: 'unlogged' }]);
    });

    it("a TEMP table of the same name in the session's pg_temp schema shadows the real one and is reported", async () => {
      await sql(WIDGETS_SQL);
      const dataSource = await openDataSource({ extra: { max: 1 } });
      await dataSource.query('CREATE TEMP TABLE widgets (id text)');
      const report = await validateSchema(dataSource, SPECS);
      expect(report.mismatches).toEqual([{ table: 'widgets', property: 'persistence', expected: 'permanent', actual: 'temporary' }]);
    });
  });

  describe('columns', () => {
    beforeEach(() => sql(WIDGETS_SQL));

    it('a missing column', async () => {
      await sql('ALTER TABLE widgets DROP COLUMN owner');
      expect((await validate()).mismatches).toEqual([{ table: 'widgets', property: 'column:owner', expected: 'text null no default', actual: 'missing' }]);
    });

    it('a wrong type', async () => {
      await sql('ALTER TABLE widgets ALTER COLUMN lease_until_ms DROP DEFAULT, ALTER COLUMN lease_until_ms TYPE integer, ALTER COLUMN lease_until_ms SET DEFAULT 0');
      expect((await validate()).mismatches).toEqual([
        { table: 'widgets', property: 'column:lease_until_ms', expected: 'bigint not null default 0', actual: 'integer not null default 0' },
      ]);
    });

    it('a nullable column that must be NOT NULL', async () => {
      await sql('ALTER TABLE widgets ALTER COLUMN phase DROP NOT NULL');
      expect((await validate()).mismatches).toEqual([
        { table: 'widgets', property: 'column:phase', expected: "text not null default 'ready'::text", actual: "text null default 'ready'::text" },
      ]);
    });

    it('a different or missing default, collation and generation expression', async () => {
      await sql(`ALTER TABLE widgets ALTER COLUMN phase SET DEFAULT 'running', ALTER COLUMN owner SET DEFAULT 'x', ALTER COLUMN format DROP DEFAULT`);
      await sql('ALTER TABLE widgets DROP COLUMN name_length');
      await sql('ALTER TABLE widgets ALTER COLUMN name TYPE text COLLATE "POSIX"');
      await sql('ALTER TABLE widgets ADD COLUMN name_length integer GENERATED ALWAYS AS (length(name) + 1) STORED');
      expect((await validate()).mismatches).toEqual([
        { table: 'widgets', property: 'column:format', expected: 'integer not null default 1', actual: 'integer not null no default' },
        { table: 'widgets', property: 'column:phase', expected: "text not null default 'ready'::text", actual: "text not null default 'running'::text" },
        { table: 'widgets', property: 'column:owner', expected: 'text null no default', actual: "text null default 'x'::text" },
        { table: 'widgets', property: 'column:name', expected: 'text not null collate C', actual: 'text not null collate POSIX' },
        {
          table: 'widgets',
          property: 'column:name_length',
          expected: 'integer null generated as (length(name))',
          actual: 'integer null generated as (length(name) + 1)',
        },
      ]);
    });

    it('an undeclared extra column is reported as absent / its type, extra columns by name; column order is not compared', async () => {
      await sql('ALTER TABLE widgets ADD COLUMN zeta numeric(10,2), ADD COLUMN alpha uuid');
      const reordered = defineTableSpec({ ...WIDGETS, columns: [...WIDGETS.columns].reverse() });
      expect((await validate([reordered, WIDGET_PARTS])).mismatches).toEqual([
        { table: 'widgets', property: 'column:alpha', expected: 'absent', actual: 'uuid' },
        { table: 'widgets', property: 'column:zeta', expected: 'absent', actual: 'numeric(10,2)' },
      ]);
    });
  });

  describe('primary key', () => {
    beforeEach(() => sql(WIDGETS_SQL));

    it('column order is significant', async () => {
      await sql('ALTER TABLE widget_parts DROP CONSTRAINT widget_parts_pkey, ADD CONSTRAINT widget_parts_pkey PRIMARY KEY (part, widget_id)');
      expect((await validate()).mismatches).toEqual([
        { table: 'widget_parts', property: 'primary_key', expected: '(widget_id, part)', actual: '(part, widget_id)' },
      ]);
    });

    it('no primary key is reported as none', async () => {
      await sql('ALTER TABLE widget_parts DROP CONSTRAINT widget_parts_pkey');
      expect((await validate()).mismatches).toEqual([
        { table: 'widget_parts', property: 'primary_key', expected: '(widget_id, part)', actual: 'none' },
      ]);
    });
  });

  describe('uniques and indexes', () => {
    beforeEach(() => sql(WIDGETS_SQL));

    it('a missing index and a missing unique constraint', async () => {
      await sql('DROP INDEX widgets_tags_idx; ALTER TABLE widgets DROP CONSTRAINT widgets_name_key');
      expect((await validate()).mismatches).toEqual([
        { table: 'widgets', property: 'unique:widgets_name_key', expected: 'unique (name)', actual: 'missing' },
        { table: 'widgets', property: 'index:widgets_tags_idx', expected: 'gin (tags)', actual: 'missing' },
      ]);
    });

    it('an index with the wrong column order or the wrong predicate', async () => {
      await sql(`DROP INDEX widgets_running_lease_idx; CREATE INDEX widgets_running_lease_idx ON widgets (phase, lease_until_ms) WHERE phase = 'running'`);
      await sql(`DROP INDEX widgets_tags_idx; CREATE INDEX widgets_tags_idx ON widgets USING gin (tags) WHERE owner IS NOT NULL`);
      expect((await validate()).mismatches).toEqual([
        {
          table: 'widgets',
          property: 'index:widgets_running_lease_idx',
          expected: "btree (lease_until_ms, phase) where phase = 'running'::text",
          actual: "btree (phase, lease_until_ms) where phase = 'running'::text",
        },
        { table: 'widgets', property: 'index:widgets_tags_idx', expected: 'gin (tags)', actual: 'gin (tags) where owner IS NOT NULL' },
      ]);
    });

    it('an index with the wrong access method or uniqueness', async () => {
      await sql('DROP INDEX widgets_tags_idx; CREATE INDEX widgets_tags_idx ON widgets USING btree (tags)');
      await sql('DROP INDEX widgets_lower_code_idx; CREATE INDEX widgets_lower_code_idx ON widgets (lower(code))');
      expect((await validate()).mismatches).toEqual([
        { table: 'widgets', property: 'index:widgets_lower_code_idx', expected: 'unique btree (lower((code)::text))', actual: 'btree (lower((code)::text))' },
        { table: 'widgets', property: 'index:widgets_tags_idx', expected: 'gin (tags)', actual: 'btree (tags)' },
      ]);
    });

    it('an index left invalid by a failed CREATE INDEX CONCURRENTLY is reported as invalid', async () => {
      await sql('DROP INDEX widgets_lower_code_idx');
      await sql(`INSERT INTO widgets (id, name, code) VALUES ('a', 'n1', 'same'), ('b', 'n2', 'SAME')`);
      await expect(sql('CREATE UNIQUE INDEX CONCURRENTLY widgets_lower_code_idx ON widgets (lower(code))')).rejects.toThrow();
      expect((await validate()).mismatches).toEqual([
        { table: 'widgets', property: 'index:widgets_lower_code_idx', expected: 'unique btree (lower((code)::text))', actual: 'invalid' },
      ]);
    });

    it('an extra unique index and an extra unique constraint are reported; an extra non-unique index is tolerated', async () => {
      await sql('CREATE UNIQUE INDEX widgets_tag_key ON widgets (owner) WHERE owner IS NOT NULL');
      await sql('ALTER TABLE widgets ADD CONSTRAINT widgets_code_key UNIQUE (code)');
      await sql('CREATE INDEX widgets_owner_idx ON widgets (owner)');
      expect((await validate()).mismatches).toEqual([
        { table: 'widgets', property: 'unique:widgets_code_key', expected: 'absent', actual: 'unique (code)' },
        { table: 'widgets', property: 'unique:widgets_tag_key', expected: 'absent', actual: 'unique (owner) where owner IS NOT NULL' },
      ]);
    });

    it('a unique declared as an index with unique: true matches a unique constraint', async () => {
      const spec = defineTableSpec({
        ...WIDGETS,
        uniques: [],
        indexes: [...(WIDGETS.indexes ?? []), { name: 'widgets_name_key', columns: ['name'], unique: true, method: 'btree' }],
      });
      expect((await validate([spec, WIDGET_PARTS])).ok).toBe(true);
    });
  });

  describe('checks and foreign keys', () => {
    beforeEach(() => sql(WIDGETS_SQL));

    it('a missing, a different and an extra check constraint', async () => {
      await sql('ALTER TABLE widgets DROP CONSTRAINT widgets_format_check');
      await sql(`ALTER TABLE widgets DROP CONSTRAINT widgets_phase_check, ADD CONSTRAINT widgets_phase_check CHECK (phase <> '')`);
      await sql('ALTER TABLE widgets ADD CONSTRAINT widgets_lease_check CHECK (lease_until_ms >= 0)');
      expect((await validate()).mismatches).toEqual([
        { table: 'widgets', property: 'check:widgets_format_check', expected: 'check (format = 1)', actual: 'missing' },
        { table: 'widgets', property: 'check:widgets_lease_check', expected: 'absent', actual: 'check (lease_until_ms >= 0)' },
        {
          table: 'widgets',
          property: 'check:widgets_phase_check',
          expected: "check (phase = ANY (ARRAY['ready'::text, 'running'::text]))",
          actual: "check (phase <> ''::text)",
        },
      ]);
    });

    it('a NOT VALID check constraint is reported as invalid', async () => {
      await sql('ALTER TABLE widgets DROP CONSTRAINT widgets_format_check, ADD CONSTRAINT widgets_format_check CHECK (format = 1) NOT VALID');
      expect((await validate()).mismatches).toEqual([
        { table: 'widgets', property: 'check:widgets_format_check', expected: 'check (format = 1)', actual: 'invalid' },
      ]);
    });

    it('a foreign key with another ON DELETE action, a missing one and an extra one', async () => {
      await sql(`ALTER TABLE widget_parts DROP CONSTRAINT widget_parts_widget_fkey,
                   ADD CONSTRAINT widget_parts_widget_fkey FOREIGN KEY (widget_id) REFERENCES widgets (id) ON DELETE RESTRICT`);
      await sql('CREATE TABLE gadgets (id text PRIMARY KEY, widget_id text, CONSTRAINT gadgets_widget_fkey FOREIGN KEY (widget_id) REFERENCES widgets (id))');
      const gadgets = defineTableSpec({
        name: 'gadgets',
        columns: [
          { name: 'id', type: 'text', nullable: false },
          { name: 'widget_id', type: 'text', nullable: true },
        ],
        primaryKey: ['id'],
        foreignKeys: [{ name: 'gadgets_owner_fkey', columns: ['widget_id'], references: { table: 'widgets', columns: ['id'] }, onDelete: 'set null' }],
      });
      expect((await validate([WIDGETS, WIDGET_PARTS, gadgets])).mismatches).toEqual([
        {
          table: 'widget_parts',
          property: 'foreign_key:widget_parts_widget_fkey',
          expected: '(widget_id) references widgets (id) on delete cascade',
          actual: '(widget_id) references widgets (id) on delete restrict',
        },
        { table: 'gadgets', property: 'foreign_key:gadgets_owner_fkey', expected: '(widget_id) references widgets (id) on delete set null', actual: 'missing' },
        {
          table: 'gadgets',
          property: 'foreign_key:gadgets_widget_fkey',
          expected: 'absent',
          actual: '(widget_id) references widgets (id) on delete no action',
        },
      ]);
    });
  });

  describe('triggers and their functions', () => {
    const GUARD_BODY = `
      BEGIN
        RAISE EXCEPTION 'widget_parts is frozen';
      END
    `;
    const GUARDED = defineTableSpec({
      ...WIDGET_PARTS,
      triggers: [
        { name: 'widget_parts_frozen', timing: 'before', events: ['update', 'delete'], level: 'row', function: 'widget_parts_guard', functionFingerprint: fingerprintFunction('plpgsql', GUARD_BODY) },
      ],
    });
    const expected = 'before update or delete for each row execute widget_parts_guard()';

    beforeEach(async () => {
      await sql(WIDGETS_SQL);
      await sql(`CREATE FUNCTION widget_parts_guard() RETURNS trigger LANGUAGE plpgsql AS $$${GUARD_BODY}$$`);
      await sql('CREATE TRIGGER widget_parts_frozen BEFORE UPDATE OR DELETE ON widget_parts FOR EACH ROW EXECUTE FUNCTION widget_parts_guard()');
    });

    it('a declared trigger that exists, is enabled and calls its unaltered function gives no mismatch', async () => {
      expect((await validate([WIDGETS, GUARDED])).mismatches).toEqual([]);
    });

    it('a trigger re-created with a column list or a WHEN condition no longer matches its declaration', async () => {
      await sql('DROP TRIGGER widget_parts_frozen ON widget_parts');
      await sql('CREATE TRIGGER widget_parts_frozen BEFORE UPDATE OF part OR DELETE ON widget_parts FOR EACH ROW WHEN (false) EXECUTE FUNCTION widget_parts_guard()');
      expect((await validate([WIDGETS, GUARDED])).mismatches).toEqual([
        { table: 'widget_parts', property: 'trigger:widget_parts_frozen', expected, actual: `${expected} of (part) with a when condition` },
      ]);
    });

    it('an undeclared trigger is reported as absent / its definition, after the declared ones; triggers come after foreign keys', async () => {
      await sql('ALTER TABLE widget_parts DROP CONSTRAINT widget_parts_widget_fkey');
      await sql('CREATE TRIGGER a_extra AFTER INSERT ON widget_parts FOR EACH STATEMENT EXECUTE FUNCTION widget_parts_guard()');
      expect((await validate([WIDGETS, GUARDED])).mismatches).toEqual([
        { table: 'widget_parts', property: 'foreign_key:widget_parts_widget_fkey', expected: '(widget_id) references widgets (id) on delete cascade', actual: 'missing' },
        { table: 'widget_parts', property: 'trigger:a_extra', expected: 'absent', actual: 'after insert for each statement execute widget_parts_guard()' },
      ]);
    });

    it('a trigger function found only in another schema is missing; a trigger calling it names that schema', async () => {
      await sql('CREATE SCHEMA elsewhere');
      await sql('ALTER FUNCTION widget_parts_guard() SET SCHEMA elsewhere');
      expect((await validate([WIDGETS, GUARDED])).mismatches).toEqual([
        { table: 'widget_parts', property: 'trigger:widget_parts_frozen', expected, actual: 'before update or delete for each row execute elsewhere.widget_parts_guard()' },
        { table: 'widget_parts', property: 'function:widget_parts_guard', expected: `fingerprint ${GUARDED.triggers?.[0].functionFingerprint}`, actual: 'missing' },
      ]);
    });
  });

  describe('migrations', () => {
    beforeEach(() => sql(WIDGETS_SQL));

    it('every migration registered on the DataSource must have its row; an unapplied one is pending', async () => {
      const dataSource = await openDataSource({ migrations: [...AGENT_RUNTIME_MIGRATIONS, NeverApplied1799999999999] });
      const report = await validateSchema(dataSource, SPECS);
      expect(report.mismatches).toEqual([
        { table: MIGRATIONS_TABLE, property: 'migration:NeverApplied1799999999999', expected: 'applied', actual: 'pending' },
      ]);
    });

    it('rows for migrations this build does not know are tolerated', async () => {
      await sql(`INSERT INTO ${MIGRATIONS_TABLE} (timestamp, name) VALUES (1899999999999, 'FromTheFuture1899999999999')`);
      expect((await validate()).ok).toBe(true);
    });

    it('a missing migrations table leaves every registered migration pending', async () => {
      await sql(`DROP TABLE ${MIGRATIONS_TABLE}`);
      const report = await validate([]);
      expect(report.mismatches.map((m) => [m.table, m.property, m.actual])).toEqual(
        AGENT_RUNTIME_MIGRATIONS.map((migration) => [MIGRATIONS_TABLE, `migration:${(new (migration as new () => MigrationInterface)()).name}`, 'pending']),
      );
    });
  });

  describe('synchronous_commit and synchronous_standby_names', () => {
    beforeEach(() => sql(WIDGETS_SQL));

    it('synchronous_commit = off on the pooled connection is refused', async () => {
      await sql(`ALTER DATABASE ${databaseName()} SET synchronous_commit = off`);
      expect((await validate()).mismatches).toEqual([{ table: null, property: 'synchronous_commit', expected: 'not off', actual: 'off' }]);
    });

    it('synchronous_commit = off on a dedicated connection the caller passes is refused', async () => {
      const dedicated = new Client({ connectionString: database.url });
      await dedicated.connect();
      try {
        await dedicated.query('SET synchronous_commit = off');
        const report = await validateSchema(await openDataSource(), SPECS, { dedicatedConnections: [admin, dedicated] });
        expect(report.mismatches).toEqual([
          { table: null, property: 'synchronous_commit', expected: 'not off', actual: 'off on dedicated connection 2' },
        ]);
      } finally {
        await dedicated.end();
      }
    });

    it('requireSynchronousStandby needs a standby name and a synchronous_commit that waits for it (local is refused)', async () => {
      await sql(`ALTER DATABASE ${databaseName()} SET synchronous_commit = local`);
      expect((await validate(SPECS, {})).ok).toBe(true);
      expect((await validate(SPECS, { requireSynchronousStandby: true })).mismatches).toEqual([
        { table: null, property: 'synchronous_commit', expected: 'on, remote_write or remote_apply', actual: 'local' },
        { table: null, property: 'synchronous_standby_names', expected: 'non-empty', actual: 'empty' },
      ]);
    });
  });
});

describe('§1.4 API and report', () => {
  it('several mismatches are all reported together: settings, migrations, then tables in declaration order', async () => {
    await sql(WIDGETS_SQL);
    await sql(`ALTER DATABASE ${databaseName()} SET synchronous_commit = off`);
    await sql(`DROP TABLE widget_parts; DROP INDEX widgets_tags_idx`);
    await sql(`ALTER TABLE widgets ADD COLUMN extra_b text, ADD COLUMN extra_a text, ALTER COLUMN owner TYPE varchar(10)`);
    await sql(`ALTER TABLE widgets DROP CONSTRAINT widgets_pkey, ALTER COLUMN id DROP NOT NULL`);
    await sql(`ALTER TABLE widgets ADD CONSTRAINT widgets_id_key UNIQUE (id), ADD CONSTRAINT widgets_a_check CHECK (format > 0)`);
    await sql(`ALTER TABLE widgets SET UNLOGGED`);
    const ghost = defineTableSpec({ name: 'ghosts', columns: [{ name: 'id', type: 'text', nullable: false }], primaryKey: ['id'] });
    const dataSource = await openDataSource({ migrations: [...AGENT_RUNTIME_MIGRATIONS, NeverApplied1799999999999] });
    const report = await validateSchema(dataSource, [ghost, WIDGETS, WIDGET_PARTS]);
    expect(report.mismatches.map((m) => [m.table, m.property])).toEqual([
      [null, 'synchronous_commit'],
      [MIGRATIONS_TABLE, 'migration:NeverApplied1799999999999'],
      ['ghosts', 'table'],
      ['widgets', 'persistence'],
      ['widgets', 'column:id'],
      ['widgets', 'column:owner'],
      ['widgets', 'column:extra_a'],
      ['widgets', 'column:extra_b'],
      ['widgets', 'primary_key'],
      ['widgets', 'unique:widgets_id_key'],
      ['widgets', 'index:widgets_tags_idx'],
      ['widgets', 'check:widgets_a_check'],
      ['widget_parts', 'table'],
    ]);
    expect(await validateSchema(dataSource, [ghost, WIDGETS, WIDGET_PARTS])).toEqual(report);
  });

  it('the report is frozen, JSON-safe and holds no row data', async () => {
    await sql(WIDGETS_SQL);
    await sql(`INSERT INTO widgets (id, name, owner, code) VALUES ('secret-id-4711', 'secret-name-4711', 'secret-owner-4711', 'secret-code')`);
    await sql(`ALTER TABLE widgets ADD COLUMN note text DEFAULT 'x', ALTER COLUMN owner SET NOT NULL`);
    const report = await validate();
    expect(report.ok).toBe(false);
    expect(Object.isFrozen(report)).toBe(true);
    expect(Object.isFrozen(report.mismatches)).toBe(true);
    expect(report.mismatches.every((m) => Object.isFrozen(m))).toBe(true);
    const json = JSON.stringify(report);
    expect(JSON.parse(json)).toEqual(report);
    expect(json).not.toContain('secret');
    for (const mismatch of report.mismatches) {
      expect(Object.keys(mismatch).sort()).toEqual(['actual', 'expected', 'property', 'table']);
    }
  });

  it("assertSchema throws the caller's error with code schema_mismatch, a message stating only the count, and details.mismatches", async () => {
    await sql(WIDGETS_SQL);
    await sql('DROP TABLE widget_parts; ALTER TABLE widgets DROP COLUMN owner');
    const dataSource = await openDataSource();
    const error = await assertSchema(dataSource, SPECS, {}, (mismatches) => new SampleModuleError('schema_mismatch', { mismatches })).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(SampleModuleError);
    const { code, message, details } = error as SampleModuleError;
    expect(code).toBe('schema_mismatch');
    expect(message).toBe('schema_mismatch {"mismatches":2}');
    expect(details?.mismatches).toEqual((await validateSchema(dataSource, SPECS)).mismatches);
  });

  it('assertSchema returns the ok report and never calls the factory when the schema matches', async () => {
    await sql(WIDGETS_SQL);
    const makeError = jest.fn(() => new SampleModuleError('schema_mismatch'));
    await expect(assertSchema(await openDataSource(), SPECS, {}, makeError)).resolves.toEqual({ ok: true, mismatches: [] });
    expect(makeError).not.toHaveBeenCalled();
  });

  it('catalog reads run in one READ ONLY, REPEATABLE READ transaction with names as bound parameters', async () => {
    await sql(WIDGETS_SQL);
    const queries: { query: string; parameters?: unknown[] }[] = [];
    const logger: Logger = {
      logQuery: (query, parameters) => void queries.push({ query, parameters }),
      logQueryError: () => {},
      logQuerySlow: () => {},
      logSchemaBuild: () => {},
      logMigration: () => {},
      log: () => {},
    };
    const dataSource = await openDataSource({ logging: ['query'], logger });
    queries.length = 0;
    await validateSchema(dataSource, SPECS, { schema: 'public' });
    const statements = queries.map((q) => q.query.trim());
    expect(statements[0]).toBe('START TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    expect(statements[statements.length - 1]).toBe('COMMIT');
    expect(statements.filter((s) => /START TRANSACTION|COMMIT/.test(s))).toHaveLength(2);
    const catalogReads = statements.slice(1, -1);
    expect(catalogReads.length).toBeGreaterThan(3);
    for (const statement of catalogReads) {
      expect(statement).not.toMatch(/widget/);
      expect(statement.replace(/"public"\."agent_runtime_migrations"/, '')).not.toMatch(/'public'|\bpublic\b/);
    }
    expect(queries.some((q) => JSON.stringify(q.parameters ?? []).includes('widget_parts'))).toBe(true);
  });

  it('schema names outside ^[a-z_][a-z0-9_]{0,62}$ are refused before any query', async () => {
    const dataSource = await openDataSource();
    const spy = jest.spyOn(dataSource, 'createQueryRunner');
    for (const schema of ['Public', 'public; drop table x', 'a'.repeat(64), '']) {
      await expect(validateSchema(dataSource, SPECS, { schema })).rejects.toThrow(TypeError);
    }
    await expect(validateSchema(dataSource, [{ ...WIDGETS, name: 'Widgets' }])).rejects.toThrow(TypeError);
    await expect(validateSchema(dataSource, [WIDGETS, WIDGETS])).rejects.toThrow(/declared twice/);
    expect(spy).not.toHaveBeenCalled();
  });

  describe('fail fast', () => {
    it('a mismatch is never retried', async () => {
      const dataSource = await openDataSource();
      const spy = jest.spyOn(dataSource, 'createQueryRunner');
      const report = await validateSchema(dataSource, SPECS);
      expect(report.ok).toBe(false);
      expect(spy).toHaveBeenCalledTimes(1);
    });

    it('a refused connection is retried connectRetries times, 500 ms apart, then rejects with database_unreachable', async () => {
      const proxy = await startProxy(database.url);
      try {
        await sql(WIDGETS_SQL);
        const dataSource = await openDataSource({}, proxy.url);
        expect((await validateSchema(dataSource, SPECS)).ok).toBe(true);
        await proxy.setMode('reset');
        const attemptsBefore = proxy.connections();
        const spy = jest.spyOn(dataSource, 'createQueryRunner');
        const started = performance.now();
        const error = await validateSchema(dataSource, SPECS).catch((caught: unknown) => caught);
        const elapsed = performance.now() - started;
        expect(error).toBeInstanceOf(SchemaValidatorError);
        expect((error as SchemaValidatorError).code).toBe('database_unreachable');
        expect((error as SchemaValidatorError).details?.attempts).toBe(3);
        expect(spy).toHaveBeenCalledTimes(3);
        expect(proxy.connections() - attemptsBefore).toBe(3);
        expect(elapsed).toBeGreaterThanOrEqual(950);
        expect(elapsed).toBeLessThan(4000);
        spy.mockClear();
        await expect(validateSchema(dataSource, SPECS, { connectRetries: 0 })).rejects.toThrow(SchemaValidatorError);
        expect(spy).toHaveBeenCalledTimes(1);
      } finally {
        await proxy.close();
      }
    });

    it('a database that never answers fails within about seven seconds (3 attempts of 2000 ms, 500 ms apart)', async () => {
      const proxy = await startProxy(database.url);
      try {
        const dataSource = await openDataSource({ connectTimeoutMS: 3000 }, proxy.url);
        await proxy.setMode('blackhole');
        const spy = jest.spyOn(dataSource, 'createQueryRunner');
        const started = performance.now();
        const error = await validateSchema(dataSource, SPECS).catch((caught: unknown) => caught);
        const elapsed = performance.now() - started;
        expect(error).toMatchObject({ code: 'database_unreachable', details: { attempts: 3, socket_error: 'connect_timeout', sqlstate: null } });
        expect(spy).toHaveBeenCalledTimes(3);
        expect(elapsed).toBeGreaterThanOrEqual(6900);
        // generous upper bound: timers fire late on a loaded machine
        expect(elapsed).toBeLessThan(10000);
      } finally {
        await proxy.close();
      }
    }, 20000);
  });
});

function databaseName(): string {
  return new URL(database.url).pathname.slice(1);
}

interface Proxy {
  readonly url: string;
  /** Switches mode and cuts the open connections; resolves once the pool had time to notice. */
  setMode(mode: 'forward' | 'reset' | 'blackhole'): Promise<void>;
  /** Connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

/** A TCP proxy in front of the test server that can start refusing (reset) or swallowing (blackhole) connections. */
async function startProxy(targetUrl: string): Promise<Proxy> {
  const target = new URL(targetUrl);
  let mode: 'forward' | 'reset' | 'blackhole' = 'forward';
  let accepted = 0;
  const sockets = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  };
  const server: Server = createServer((socket) => {
    accepted += 1;
    track(socket);
    if (mode === 'reset') {
      socket.resetAndDestroy();
      return;
    }
    if (mode === 'blackhole') return;
    const upstream = new Socket();
    track(upstream);
    upstream.connect(Number(target.port || 5432), target.hostname, () => {
      socket.pipe(upstream).pipe(socket);
    });
    socket.on('close', () => upstream.destroy());
    upstream.on('close', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(targetUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    async setMode(next) {
      mode = next;
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => setTimeout(resolve, 100));
    },
    connections: () => accepted,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
