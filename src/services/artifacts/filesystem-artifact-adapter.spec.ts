import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FilesystemArtifactAdapter } from './filesystem-artifact-adapter';
import { scopeKey } from '../service-scope';
import { thrown } from '../../shared/testing/thrown';
import { RuntimeServiceError } from '../runtime-service.errors';
import { describeArtifactAdapterContract } from './testing/artifact-adapter-contract';
import { expectArtifactCapabilities, expectNoContent, SECRET, serviceError } from './testing/artifact-expectations';

const roots: string[] = [];
const adapters: FilesystemArtifactAdapter[] = [];

async function newRoot(): Promise<string> {
  const root = await fs.mkdtemp(join(tmpdir(), 'artifacts-'));
  roots.push(root);
  return root;
}

function adapter(root: string, adapterConfig: Record<string, number> = {}) {
  const created = new FilesystemArtifactAdapter(root, { adapterConfig });
  adapters.push(created);
  return created;
}

afterEach(async () => {
  await Promise.all(adapters.splice(0).map((a) => a.close()));
});

afterAll(async () => {
  await Promise.all(roots.splice(0).map((root) => fs.rm(root, { recursive: true, force: true })));
});

let sharedRoot: string;
beforeAll(async () => {
  sharedRoot = await newRoot();
});

describeArtifactAdapterContract('FilesystemArtifactAdapter', async (adapterConfig, clock) => {
  const created = new FilesystemArtifactAdapter(sharedRoot, { adapterConfig: { ...adapterConfig, maxScanEntries: 200 }, clock });
  await created.start();
  return created;
});

const A = { appName: `app-${SECRET}`, userId: `user-${SECRET}` };
const FILE = { ...A, filename: `${SECRET}.txt` };
const data = (text: string) => new Uint8Array(Buffer.from(text));
const save = (target: FilesystemArtifactAdapter, text = 'hello', filename = FILE.filename) => target.saveArtifact({ ...A, filename, artifact: { data: data(text), mimeType: 'text/plain' } });
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describe('FilesystemArtifactAdapter (spec 07 §2)', () => {
  it('is durable, per scope shard, with the filesystem defaults', async () => {
    const created = adapter(await newRoot());
    expect(created.id).toBe('filesystem_artifact');
    expectArtifactCapabilities(created.capabilities, 'filesystem');
    expect(created.config).toEqual({ maxArtifactBytes: 64 * 1024 * 1024, maxPageLimit: 1000, legacyListLimit: 1000, maxScanEntries: 10_000, recoveryGraceMs: 300_000 });
  });

  describe('start', () => {
    it('creates scope-shards in a writable root', async () => {
      const root = await newRoot();
      await adapter(root).start();
      expect((await fs.stat(join(root, 'scope-shards'))).isDirectory()).toBe(true);
      expect(await fs.readdir(join(root, 'scope-shards'))).toEqual([]);
      await adapter(root).start();
    });

    it('fails with artifact_root_unavailable for a missing root, a file, or a root it cannot write, naming no path', async () => {
      const root = await newRoot();
      const file = join(root, `${SECRET}-file`);
      await fs.writeFile(file, 'x');
      for (const unusable of [join(root, `${SECRET}-missing`), file, '/proc']) {
        const error = await adapter(unusable)
          .start()
          .then(() => null, (caught: unknown) => caught as RuntimeServiceError);
        expect(error).toMatchObject({ code: 'runtime_service_bundle_start_failed', details: { stage: 'artifact', reason: 'artifact_root_unavailable' } });
        expectNoContent(error as RuntimeServiceError);
        expect((error as Error).message).not.toContain(root);
      }
    });

    it('refuses a relative or unusable root at construction', () => {
      for (const root of ['relative/dir', '', '/tmp/a\u0000b', '/tmp/\ud800', 7 as never]) {
        const error = thrown(() => new FilesystemArtifactAdapter(root), RuntimeServiceError);
        expect(error).toMatchObject({ code: 'runtime_service_bundle_start_failed', details: { stage: 'artifact', reason: 'artifact_root_unavailable' } });
      }
    });
  });

  describe('layout', () => {
    it('keeps <version>.bin and <version>.json under the scope key and the SHA-256 of the filename, and head.json with next_version', async () => {
      const root = await newRoot();
      const created = adapter(root);
      await save(created, 'one');
      await save(created, 'two');
      const directory = join(root, 'scope-shards', scopeKey('artifact', A), sha(FILE.filename));
      expect((await fs.readdir(directory)).sort()).toEqual(['1.bin', '1.json', '2.bin', '2.json', 'head.json']);
      expect(await fs.readFile(join(directory, '2.bin'), 'utf8')).toBe('two');
      expect(JSON.parse(await fs.readFile(join(directory, '2.json'), 'utf8'))).toMatchObject({ schema_version: 1, filename: FILE.filename, version: 2, size_bytes: 3, sha256: sha('two') });
      expect(JSON.parse(await fs.readFile(join(directory, 'head.json'), 'utf8'))).toEqual({ schema_version: 1, filename: FILE.filename, next_version: 3 });
      // nothing is left under a temporary name
      expect(await fs.readdir(join(root, 'scope-shards', scopeKey('artifact', A), 'tmp'))).toEqual([]);
      const session = { ...A, sessionId: 's1' };
      await created.saveArtifact({ ...session, filename: 'x', artifact: { data: data('s'), mimeType: 'a/b' } });
      expect(await fs.readdir(join(root, 'scope-shards', scopeKey('artifact', session)))).toEqual(expect.arrayContaining([sha('x'), 'tmp']));
    });

    it('keeps a deleted number taken with an emptied .bin, also when head.json is lost', async () => {
      const root = await newRoot();
      const created = adapter(root);
      await save(created);
      await save(created);
      expect(await created.deleteArtifact(FILE)).toBe(2);
      const directory = join(root, 'scope-shards', scopeKey('artifact', A), sha(FILE.filename));
      expect((await fs.readdir(directory)).sort()).toEqual(['1.bin', '2.bin', 'head.json']);
      expect((await fs.stat(join(directory, '1.bin'))).size).toBe(0);
      await fs.unlink(join(directory, 'head.json'));
      expect(await save(created, 'third')).toBe(3);
      await fs.writeFile(join(directory, 'head.json'), 'not json');
      expect(await save(created, 'fourth')).toBe(4);
      expect(await created.listVersions(FILE)).toMatchObject({ versions: [{ version: 3 }, { version: 4 }] });
    });
  });

  describe('several instances on one root', () => {
    it('give concurrent saves of one file distinct, gap-free versions', async () => {
      const root = await newRoot();
      const [first, second] = [adapter(root), adapter(root)];
      const saves = Array.from({ length: 40 }, (_, i) => save(i % 2 === 0 ? first : second, `content ${i}`));
      const versions = await Promise.all(saves);
      expect([...versions].sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
      const listed = await first.listVersions(FILE, { limit: 40 });
      expect(listed.versions.map((v) => v.version)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
      for (let i = 0; i < 40; i += 1) {
        const record = await second.loadArtifact({ ...FILE, version: versions[i] });
        expect(Buffer.from(record?.data ?? []).toString()).toBe(`content ${i}`);
        expect(record?.sha256).toBe(sha(`content ${i}`));
      }
    });

    it('keep data across a new adapter instance on the same root', async () => {
      const root = await newRoot();
      const before = adapter(root);
      await save(before, 'kept', 'a');
      await save(before, 'kept too', 'b');
      await before.deleteArtifact({ ...A, filename: 'b' });
      await before.close();
      const after = adapter(root);
      await after.start();
      expect(Buffer.from((await after.loadArtifact({ ...A, filename: 'a' }))?.data ?? []).toString()).toBe('kept');
      expect((await after.listArtifactKeys(A)).keys).toEqual(['a']);
      expect(await save(after, 'again', 'b')).toBe(2);
    });
  });

  describe('openScope recovery', () => {
    it('removes temporaries older than recoveryGraceMs and keeps younger ones and published versions', async () => {
      const root = await newRoot();
      const created = adapter(root, { recoveryGraceMs: 60_000 });
      await save(created);
      const key = scopeKey('artifact', A);
      const temporaries = join(root, 'scope-shards', key, 'tmp');
      const old = join(temporaries, 'old.bin.tmp');
      const young = join(temporaries, 'young.bin.tmp');
      await fs.writeFile(old, 'left by a crash');
      await fs.writeFile(young, 'a save in progress');
      const past = new Date(Date.now() - 120_000);
      await fs.utimes(old, past, past);
      await created.openScope(key);
      expect(await fs.readdir(temporaries)).toEqual(['young.bin.tmp']);
      expect(Buffer.from((await created.loadArtifact(FILE))?.data ?? []).toString()).toBe('hello');
      // a scope without a directory yet, and a grace of 0 removing everything
      await created.openScope('0'.repeat(64));
      await adapter(root, { recoveryGraceMs: 0 }).openScope(key);
      expect(await fs.readdir(temporaries)).toEqual([]);
      await serviceError(created.openScope('../escape'), 'invalid_scope');
    });
  });

  describe('scan limit', () => {
    it('refuses a listing that would read more than maxScanEntries entries with artifact_scan_limit_exceeded', async () => {
      const root = await newRoot();
      // scope directory: 2 file directories + tmp = 3 entries; each file directory: head + 2 per version
      const created = adapter(root, { maxScanEntries: 9, maxPageLimit: 9, legacyListLimit: 9 });
      await save(created, 'a', 'a');
      expect((await created.listArtifactKeys(A)).keys).toEqual(['a']);
      await save(created, 'b', 'b');
      expect((await created.listArtifactKeys(A)).keys).toEqual(['a', 'b']);
      await save(created, 'b2', 'b');
      await serviceError(created.listArtifactKeys(A), 'artifact_scan_limit_exceeded', { limit: 'maxScanEntries' });
      expect((await created.listVersions({ ...A, filename: 'b' })).versions).toHaveLength(2);
      for (const text of ['b3', 'b4', 'b5']) await save(created, text, 'b');
      await serviceError(created.listVersions({ ...A, filename: 'b' }), 'artifact_scan_limit_exceeded', { limit: 'maxScanEntries' });
      await serviceError(created.loadArtifact({ ...A, filename: 'b' }), 'artifact_scan_limit_exceeded', { limit: 'maxScanEntries' });
      // a given version needs no listing
      expect((await created.loadArtifact({ ...A, filename: 'b', version: 5 }))?.version).toBe(5);
    });
  });

  describe('failures', () => {
    it('report a filesystem failure as runtime_service_store_unavailable with the errno code only', async () => {
      const root = await newRoot();
      const created = adapter(root);
      await created.start();
      // the scope's directory name taken by a file: every call into that scope fails below it
      await fs.writeFile(join(root, 'scope-shards', scopeKey('artifact', A)), SECRET);
      await serviceError(save(created), 'runtime_service_store_unavailable', { fs_error: 'ENOTDIR' });
      await serviceError(created.listArtifactKeys(A), 'runtime_service_store_unavailable', { fs_error: 'ENOTDIR' });
      await serviceError(created.loadArtifact(FILE), 'runtime_service_store_unavailable', { fs_error: 'ENOTDIR' });
    });

    it('report a damaged record as corrupt_record', async () => {
      const root = await newRoot();
      const created = adapter(root);
      await save(created);
      const directory = join(root, 'scope-shards', scopeKey('artifact', A), sha(FILE.filename));
      await fs.writeFile(join(directory, '1.json'), `{"filename":"${SECRET}"`);
      await serviceError(created.loadArtifact(FILE), 'runtime_service_store_unavailable', { reason: 'corrupt_record' });
      await serviceError(created.listVersions(FILE), 'runtime_service_store_unavailable', { reason: 'corrupt_record' });
      await save(created);
      await fs.writeFile(join(directory, '2.bin'), 'other length');
      await serviceError(created.loadArtifact(FILE), 'runtime_service_store_unavailable', { reason: 'corrupt_record' });
    });
  });
});
