import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { RuntimeArtifacts1764900000000 } from '../../migrations/1764900000000-runtime-artifacts';
import { validateSchema } from '../../src/database/schema/schema-validator';
import { ARTIFACT_TABLE_SPECS } from '../../src/services/artifacts/artifact.schema';
import { PostgresArtifactAdapter } from '../../src/services/artifacts/postgres-artifact-adapter';
import { randomId } from '../../src/shared/ids/random-id';
import { describeArtifactAdapterContract } from '../../src/services/artifacts/testing/artifact-adapter-contract';
import { expectArtifactCapabilities, SECRET, serviceError } from '../../src/services/artifacts/testing/artifact-expectations';
import { openDatabaseHarness, useHarness } from '../support/database-harness';

const MIB = 1024 * 1024;
const data = (text: string) => new Uint8Array(Buffer.from(text));
const sha = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest('hex');

describe('PostgresArtifactAdapter (spec 07 §2)', () => {
  const h = useHarness(() => openDatabaseHarness(), 'all');
  let shared: DataSource;
  const adapters: PostgresArtifactAdapter[] = [];
  const adapter = (dataSource: DataSource, options: ConstructorParameters<typeof PostgresArtifactAdapter>[1] = {}) => {
    const created = new PostgresArtifactAdapter(dataSource, options);
    adapters.push(created);
    return created;
  };
  let scope: { appName: string; userId: string };
  let file: { appName: string; userId: string; filename: string };
  const save = (target: PostgresArtifactAdapter, text = 'hello', filename = file.filename) =>
    target.saveArtifact({ ...scope, filename, artifact: { data: data(text), mimeType: 'text/plain' } });

  beforeAll(async () => {
    shared = await h().dataSource();
  });

  beforeEach(() => {
    scope = { appName: `app-${randomId('')}`, userId: `user-${SECRET}` };
    file = { ...scope, filename: `${SECRET}.txt` };
  });

  afterEach(async () => {
    await Promise.all(adapters.splice(0).map((created) => created.close()));
  });

  describeArtifactAdapterContract('PostgresArtifactAdapter', async (adapterConfig, clock) => new PostgresArtifactAdapter(shared, { adapterConfig, clock }));

  it('is durable, per scope shard, with the bytea default of 8 MiB', () => {
    const created = adapter(shared);
    expect(created.id).toBe('postgres_artifact');
    expectArtifactCapabilities(created.capabilities, 'postgres');
    expect(created.config).toEqual({ maxArtifactBytes: 8 * MIB, maxPageLimit: 1000, legacyListLimit: 1000 });
  });

  describe('tables', () => {
    it('the migration creates exactly what ARTIFACT_TABLE_SPECS declare', async () => {
      expect(await validateSchema(shared, ARTIFACT_TABLE_SPECS)).toEqual({ ok: true, mismatches: [] });
    });

    it('store a user-level version under session_id "" with its bytes, and advance the head', async () => {
      const created = adapter(shared);
      await created.saveArtifact({ ...file, artifact: { data: Uint8Array.from([0, 1, 255]), mimeType: 'a/b' }, customMetadata: { k: 'v' } });
      await created.saveArtifact({ ...scope, sessionId: 's1', filename: file.filename, artifact: { data: data('s'), mimeType: 'a/b' } });
      const rows = await h().sql(
        `SELECT session_id, version, data, size_bytes, sha256, mime_type, custom_metadata FROM agent_runtime_artifacts WHERE app_name = $1 ORDER BY session_id`,
        [scope.appName],
      );
      expect(rows).toEqual([
        { session_id: '', version: '1', data: Buffer.from([0, 1, 255]), size_bytes: '3', sha256: sha(Uint8Array.from([0, 1, 255])), mime_type: 'a/b', custom_metadata: { k: 'v' } },
        { session_id: 's1', version: '1', data: Buffer.from('s'), size_bytes: '1', sha256: sha('s'), mime_type: 'a/b', custom_metadata: {} },
      ]);
      expect(await h().sql(`SELECT session_id, next_version FROM agent_runtime_artifact_heads WHERE app_name = $1 ORDER BY session_id`, [scope.appName])).toEqual([
        { session_id: '', next_version: '2' },
        { session_id: 's1', next_version: '2' },
      ]);
    });

    it('refuse rows that break the checks, a version without its head, and deleting a head that has versions', async () => {
      await save(adapter(shared));
      const key = [scope.appName, scope.userId, '', file.filename];
      const insert = (version: number, size: number, digest: string, metadata: string, filename = file.filename) =>
        h().sql(
          `INSERT INTO agent_runtime_artifacts (app_name, user_id, session_id, filename, version, data, size_bytes, sha256, mime_type, custom_metadata, created_at_ms)
           VALUES ($1, $2, $3, $4, $5, '\\x00', $6, $7, 'a/b', $8::jsonb, 0)`,
          [...key.slice(0, 3), filename, version, size, digest, metadata],
        );
      const code = (promise: Promise<unknown>) => promise.then(() => 'accepted', (error: { code?: string }) => error.code);
      expect(await code(insert(0, 1, sha('x'), '{}'))).toBe('23514');
      expect(await code(insert(9, 2, sha('x'), '{}'))).toBe('23514');
      expect(await code(insert(9, 1, 'ABC', '{}'))).toBe('23514');
      expect(await code(insert(9, 1, sha('x'), '[]'))).toBe('23514');
      expect(await code(insert(1, 1, sha('x'), '{}', 'no head'))).toBe('23503');
      expect(await code(h().sql(`UPDATE agent_runtime_artifact_heads SET next_version = 0 WHERE app_name = $1`, [scope.appName]))).toBe('23514');
      expect(await code(h().sql(`DELETE FROM agent_runtime_artifact_heads WHERE app_name = $1`, [scope.appName]))).toMatch(/^23(?:001|503)$/);
    });

    it('the migration drops both tables on the way down and creates them again', async () => {
      const dataSource = await h().dataSource();
      const runner = dataSource.createQueryRunner();
      try {
        await new RuntimeArtifacts1764900000000().down(runner);
        expect(await h().sql(`SELECT to_regclass('agent_runtime_artifacts') AS a, to_regclass('agent_runtime_artifact_heads') AS b`)).toEqual([{ a: null, b: null }]);
        await new RuntimeArtifacts1764900000000().up(runner);
      } finally {
        await runner.release();
      }
      expect(await validateSchema(shared, ARTIFACT_TABLE_SPECS)).toEqual({ ok: true, mismatches: [] });
    });
  });

  describe('several instances on one database', () => {
    it('give concurrent saves of one file on two DataSources distinct, gap-free versions', async () => {
      const [first, second] = [adapter(shared), adapter(await h().dataSource())];
      const versions = await Promise.all(Array.from({ length: 40 }, (_, i) => save(i % 2 === 0 ? first : second, `content ${i}`)));
      expect([...versions].sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
      for (let i = 0; i < 40; i += 1) expect(Buffer.from((await second.loadArtifact({ ...file, version: versions[i] }))?.data ?? []).toString()).toBe(`content ${i}`);
      expect(await h().sql(`SELECT next_version FROM agent_runtime_artifact_heads WHERE app_name = $1`, [scope.appName])).toEqual([{ next_version: '41' }]);
    });

    it('keep data and numbering for a new adapter on a new DataSource', async () => {
      const before = adapter(shared);
      await save(before, 'one');
      await save(before, 'two');
      await before.deleteArtifact(file);
      await save(before, 'kept', 'other');
      const after = adapter(await h().dataSource());
      expect(await save(after, 'three')).toBe(3);
      expect(Buffer.from((await after.loadArtifact({ ...scope, filename: 'other' }))?.data ?? []).toString()).toBe('kept');
      expect((await after.listArtifactKeys(scope)).keys).toEqual([file.filename, 'other'].sort());
    });

    it('move a save past a version another writer inserted without advancing the head', async () => {
      const created = adapter(shared);
      await save(created);
      await h().sql(
        `INSERT INTO agent_runtime_artifacts (app_name, user_id, session_id, filename, version, data, size_bytes, sha256, mime_type, custom_metadata, created_at_ms)
         VALUES ($1, $2, '', $3, 2, '\\x00', 1, $4, 'a/b', '{}', 0)`,
        [scope.appName, scope.userId, file.filename, sha(Uint8Array.from([0]))],
      );
      expect(await save(created)).toBe(3);
    });
  });

  describe('a unique violation of the version insert', () => {
    // a sequence counts the attempts: unlike a row, nextval survives the rollback of the failing save
    const trigger = async (failures: number) => {
      await h().sql(`DROP SEQUENCE IF EXISTS artifact_test_attempts`);
      await h().sql(`CREATE SEQUENCE artifact_test_attempts`);
      await h().sql(`CREATE OR REPLACE FUNCTION artifact_test_unique_violation() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF nextval('artifact_test_attempts') <= ${failures} THEN RAISE unique_violation USING MESSAGE = 'simulated'; END IF;
          RETURN NEW;
        END $$`);
      await h().sql(`CREATE OR REPLACE TRIGGER artifact_test_unique_violation BEFORE INSERT ON agent_runtime_artifacts FOR EACH ROW EXECUTE FUNCTION artifact_test_unique_violation()`);
    };

    afterEach(async () => {
      await h().sql(`DROP TRIGGER IF EXISTS artifact_test_unique_violation ON agent_runtime_artifacts`);
    });

    it('rolls the save back and retries it in a new transaction', async () => {
      const created = adapter(shared);
      await save(created, 'one');
      await trigger(2);
      expect(await save(created, 'two')).toBe(2);
      expect(await h().sql(`SELECT version FROM agent_runtime_artifacts WHERE app_name = $1 ORDER BY version`, [scope.appName])).toEqual([{ version: '1' }, { version: '2' }]);
      expect(await h().sql(`SELECT next_version FROM agent_runtime_artifact_heads WHERE app_name = $1`, [scope.appName])).toEqual([{ next_version: '3' }]);
    });

    it('gives up after three attempts with the SQLSTATE only', async () => {
      const created = adapter(shared);
      await trigger(3);
      await serviceError(save(created), 'artifact_shard_adapter_failed', { sqlstate: '23505' });
      expect(await h().sql(`SELECT count(*)::int AS n FROM agent_runtime_artifacts WHERE app_name = $1`, [scope.appName])).toEqual([{ n: 0 }]);
      expect(await save(created)).toBe(1);
    });
  });

  describe('bounds and failures', () => {
    it('stores 8 MiB by default and refuses one byte more', async () => {
      const created = adapter(shared);
      const big = new Uint8Array(8 * MIB).map((_, i) => i % 251);
      expect(await created.saveArtifact({ ...file, artifact: { data: big, mimeType: 'application/octet-stream' } })).toBe(1);
      const loaded = await created.loadArtifact(file);
      expect(loaded?.size_bytes).toBe(8 * MIB);
      expect(Buffer.from(loaded?.data ?? []).equals(Buffer.from(big))).toBe(true);
      await serviceError(created.saveArtifact({ ...file, artifact: { data: new Uint8Array(8 * MIB + 1), mimeType: 'a/b' } }), 'artifact_too_large', { limit: 'maxArtifactBytes' });
    });

    it('bounds each statement by the call time: a save behind a held head lock fails with 57014 only', async () => {
      const created = adapter(shared);
      await save(created);
      await h().admin.query('BEGIN');
      try {
        await h().admin.query(`SELECT 1 FROM agent_runtime_artifact_heads WHERE app_name = $1 FOR UPDATE`, [scope.appName]);
        const signal = new AbortController().signal;
        await serviceError(created.saveArtifact({ ...file, artifact: { data: data(SECRET), mimeType: 'a/b' } }, { signal, timeoutMs: 200 }), 'runtime_service_store_unavailable', { sqlstate: '57014' });
      } finally {
        await h().admin.query('ROLLBACK');
      }
      expect(await save(created)).toBe(2);
    });

    it('closes after the operations in flight, which still complete', async () => {
      const created = adapter(shared);
      await save(created);
      await h().admin.query('BEGIN');
      let closed = false;
      let saving: Promise<number>;
      try {
        await h().admin.query(`SELECT 1 FROM agent_runtime_artifact_heads WHERE app_name = $1 FOR UPDATE`, [scope.appName]);
        saving = save(created, 'in flight');
        await new Promise((resolve) => setTimeout(resolve, 50));
        void created.close().then(() => (closed = true));
        await new Promise((resolve) => setTimeout(resolve, 50));
        expect(closed).toBe(false);
        await serviceError(save(created), 'runtime_service_generation_stale');
      } finally {
        await h().admin.query('COMMIT');
      }
      expect(await saving).toBe(2);
      await new Promise((resolve) => setImmediate(resolve));
      expect(closed).toBe(true);
    });

    it('answers runtime_service_store_unavailable without a SQLSTATE once the DataSource is destroyed', async () => {
      const dataSource = await h().dataSource();
      const created = adapter(dataSource);
      await save(created);
      await dataSource.destroy();
      await serviceError(save(created), 'runtime_service_store_unavailable', { sqlstate: null });
      await serviceError(created.loadArtifact(file), 'runtime_service_store_unavailable', { sqlstate: null });
    });

    it('uses a given schema, and refuses a malformed one', async () => {
      const created = adapter(shared, { schema: 'public' });
      expect(await save(created)).toBe(1);
      expect(() => new PostgresArtifactAdapter(shared, { schema: 'Bad-Schema' })).toThrow(TypeError);
      await serviceError(adapter(shared, { schema: 'missing_schema' }).loadArtifact(file), 'artifact_shard_adapter_failed', { sqlstate: '42P01' });
    });
  });
});
