import { describeArtifactAdapterContract } from './testing/artifact-adapter-contract';
import { expectArtifactCapabilities, serviceError } from './testing/artifact-expectations';
import { ManualClock } from '../../shared/time/manual-clock';
import { InMemoryArtifactAdapter } from './in-memory-artifact-adapter';

describeArtifactAdapterContract('InMemoryArtifactAdapter', async (adapterConfig, clock) => new InMemoryArtifactAdapter({ adapterConfig, clock }));

const A = { appName: 'app', userId: 'u1' };
const B = { appName: 'app', userId: 'u2' };
/** A save charging exactly `charged` bytes: data + `{}` (2) + mime `a/b` (3) + filename `f` (1). */
const save = (adapter: InMemoryArtifactAdapter, scope: object, charged: number, filename = 'f') =>
  adapter.saveArtifact({ ...(scope as typeof A), filename, artifact: { data: new Uint8Array(charged - 5 - filename.length), mimeType: 'a/b' } });

describe('InMemoryArtifactAdapter (spec 07 §2)', () => {
  it('is the shared volatile adapter with global quotas', () => {
    const adapter = new InMemoryArtifactAdapter();
    expect(adapter.id).toBe('in_memory_artifact');
    expectArtifactCapabilities(adapter.capabilities, 'volatile');
    expect(adapter.config).toEqual({
      maxArtifactBytes: 64 * 1024 * 1024,
      maxScopeBytes: 256 * 1024 * 1024,
      maxTotalBytes: 512 * 1024 * 1024,
      maxScopeArtifacts: 25_000,
      maxTotalArtifacts: 100_000,
      maxPageLimit: 1000,
      legacyListLimit: 1000,
    });
  });

  it('refuses a bad adapterConfig at construction', () => {
    expect(() => new InMemoryArtifactAdapter({ adapterConfig: { maxScanEntries: 10 } })).toThrow(
      expect.objectContaining({ code: 'invalid_runtime_service_component_config', details: { kind: 'artifact', reason: 'adapter_unknown_keys', field: 'maxScanEntries' } }),
    );
  });

  describe('quotas', () => {
    it('bounds the versions of one scope (maxScopeArtifacts) and frees a slot on delete', async () => {
      const adapter = new InMemoryArtifactAdapter({ adapterConfig: { maxScopeArtifacts: 2, maxTotalArtifacts: 3 } });
      await save(adapter, A, 10);
      await save(adapter, A, 10);
      await serviceError(save(adapter, A, 10), 'artifact_quota_exceeded', { limit: 'maxScopeArtifacts' });
      expect(await save(adapter, B, 10)).toBe(1);
      await adapter.deleteArtifact({ ...A, filename: 'f', version: 1 });
      expect(await save(adapter, A, 10)).toBe(3);
      expect(adapter.usage()).toEqual({ artifacts: 3, bytes: 30 });
    });

    it('bounds the versions of every scope together (maxTotalArtifacts)', async () => {
      const adapter = new InMemoryArtifactAdapter({ adapterConfig: { maxScopeArtifacts: 2, maxTotalArtifacts: 3 } });
      await save(adapter, A, 10);
      await save(adapter, A, 10);
      await save(adapter, B, 10);
      await serviceError(save(adapter, { ...B, sessionId: 's' }, 10), 'artifact_quota_exceeded', { limit: 'maxTotalArtifacts' });
      await adapter.deleteArtifact({ ...A, filename: 'f' });
      expect(await save(adapter, { ...B, sessionId: 's' }, 10)).toBe(1);
    });

    it('charges data, canonical metadata, mime type and filename against maxScopeBytes and maxTotalBytes', async () => {
      const adapter = new InMemoryArtifactAdapter({ adapterConfig: { maxArtifactBytes: 100, maxScopeBytes: 100, maxTotalBytes: 150 } });
      await adapter.saveArtifact({ ...A, filename: 'ab', artifact: { data: new Uint8Array(10), mimeType: 'a/b' }, customMetadata: { k: 1 } });
      expect(adapter.usage()).toEqual({ artifacts: 1, bytes: 10 + 7 + 3 + 2 });
      await save(adapter, A, 78);
      await serviceError(save(adapter, A, 1 + 5 + 1), 'artifact_quota_exceeded', { limit: 'maxScopeBytes' });
      await save(adapter, B, 50);
      await serviceError(save(adapter, { ...B, sessionId: 's' }, 6 + 1), 'artifact_quota_exceeded', { limit: 'maxTotalBytes' });
      expect(adapter.usage()).toEqual({ artifacts: 3, bytes: 150 });
      // a refused save stores nothing and takes no number
      expect((await adapter.listVersions({ ...A, filename: 'f' })).versions.map((v) => v.version)).toEqual([1]);
      await adapter.deleteArtifact({ ...B, filename: 'f' });
      expect(await save(adapter, { ...B, sessionId: 's' }, 50)).toBe(1);
    });
  });

  it('keeps numbering after a file is emptied, and forgets everything on close', async () => {
    const adapter = new InMemoryArtifactAdapter({ clock: new ManualClock() });
    await save(adapter, A, 10);
    await adapter.deleteArtifact({ ...A, filename: 'f' });
    expect(adapter.usage()).toEqual({ artifacts: 0, bytes: 0 });
    expect(await save(adapter, A, 10)).toBe(2);
    await adapter.close();
    expect(adapter.usage()).toEqual({ artifacts: 0, bytes: 0 });
  });
});
