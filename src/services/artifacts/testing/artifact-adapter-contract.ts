import type { ArtifactAdapter } from '../artifact-adapter.types';
import type { ArtifactScope } from '../../services.types';
import { randomId } from '../../../shared/ids/random-id';
import { ManualClock } from '../../../shared/time/manual-clock';
import { bytes, SECRET, serviceError, sha256, text } from './artifact-expectations';

/** Builds the adapter under test with `adapterConfig` on `clock` (its `wallNow()` gives `created_at_ms`). */
export type ArtifactAdapterFactory = (adapterConfig: Record<string, number>, clock: ManualClock) => Promise<ArtifactAdapter>;

/**
 * The behaviour every artifact adapter shares (spec 07 §1.2), run against `makeAdapter`. Each test
 * works in a scope of its own, so the suite can share a database or a root with other suites.
 */
export function describeArtifactAdapterContract(name: string, makeAdapter: ArtifactAdapterFactory): void {
  describe(`${name}: the artifact contract (spec 07 §1.2)`, () => {
    let clock: ManualClock;
    let adapter: ArtifactAdapter;
    let scope: ArtifactScope;
    let session: ArtifactScope;
    const file = (filename = `${SECRET}.txt`) => ({ ...scope, filename });
    const save = (filename = `${SECRET}.txt`, content = 'hello', extra: object = {}, where: ArtifactScope = scope) =>
      adapter.saveArtifact({ ...where, filename, artifact: { data: bytes(content), mimeType: `text/${SECRET}` }, ...extra });

    beforeEach(async () => {
      clock = new ManualClock();
      adapter = await makeAdapter({ maxPageLimit: 3, legacyListLimit: 4, maxArtifactBytes: 64 }, clock);
      scope = { appName: `app-${SECRET}-${randomId('')}`, userId: `user-${SECRET}` };
      session = { ...scope, sessionId: `session-${SECRET}` };
    });

    afterEach(async () => {
      await adapter.close();
    });

    describe('saveArtifact and loadArtifact', () => {
      it('numbers versions from 1, one more per save, and loads the latest or a given version as a frozen record', async () => {
        expect(await save(undefined, 'one', { customMetadata: { tag: 'a', n: [1, 2] } })).toBe(1);
        clock.advance(5);
        expect(await save(undefined, 'two')).toBe(2);
        const latest = await adapter.loadArtifact(file());
        expect(latest).toEqual({
          version: 2,
          data: expect.any(Uint8Array),
          mime_type: `text/${SECRET}`,
          size_bytes: 3,
          sha256: sha256(bytes('two')),
          custom_metadata: {},
          created_at_ms: clock.wallNow(),
        });
        expect(text((latest as { data: Uint8Array }).data)).toBe('two');
        expect(Object.isFrozen(latest)).toBe(true);
        const first = await adapter.loadArtifact({ ...file(), version: 1 });
        expect(first).toMatchObject({ version: 1, size_bytes: 3, custom_metadata: { tag: 'a', n: [1, 2] }, created_at_ms: clock.wallNow() - 5 });
        expect(text((first as { data: Uint8Array }).data)).toBe('one');
        expect(Object.isFrozen(first?.custom_metadata)).toBe(true);
      });

      it('answers undefined for an absent file or version', async () => {
        expect(await adapter.loadArtifact(file())).toBeUndefined();
        await save();
        expect(await adapter.loadArtifact({ ...file(), version: 2 })).toBeUndefined();
        expect(await adapter.loadArtifact(file('other'))).toBeUndefined();
      });

      it('keeps versions immutable: neither the saved array nor a loaded record changes what is stored', async () => {
        const data = bytes('original');
        await adapter.saveArtifact({ ...file(), artifact: { data, mimeType: 'text/plain' } });
        data.fill(0);
        const loaded = (await adapter.loadArtifact(file())) as { data: Uint8Array };
        expect(text(loaded.data)).toBe('original');
        loaded.data.fill(0);
        expect(text(((await adapter.loadArtifact(file())) as { data: Uint8Array }).data)).toBe('original');
        expect(loaded.data.buffer.byteLength).toBe(loaded.data.byteLength);
        await save(undefined, 'next');
        expect(text(((await adapter.loadArtifact({ ...file(), version: 1 })) as { data: Uint8Array }).data)).toBe('original');
      });

      it('keeps user-level and session artifacts, users and apps apart, each with its own numbering', async () => {
        expect(await save()).toBe(1);
        expect(await save(undefined, 'session', {}, session)).toBe(1);
        expect(await save(undefined, 'other user', {}, { ...scope, userId: 'u2' })).toBe(1);
        expect(await save(undefined, 'user again')).toBe(2);
        expect(text(((await adapter.loadArtifact({ ...session, filename: `${SECRET}.txt` })) as { data: Uint8Array }).data)).toBe('session');
        expect(await adapter.loadArtifact({ ...scope, appName: `${scope.appName}-x`, filename: `${SECRET}.txt` })).toBeUndefined();
      });

      it('stores empty data, binary data and a data array that is a view into a larger buffer', async () => {
        await adapter.saveArtifact({ ...file('empty'), artifact: { data: new Uint8Array(0), mimeType: 'application/octet-stream' } });
        expect(await adapter.loadArtifact(file('empty'))).toMatchObject({ size_bytes: 0, sha256: sha256(new Uint8Array(0)) });
        const all = Uint8Array.from({ length: 40 }, (_, i) => (i * 37) % 256);
        await adapter.saveArtifact({ ...file('view'), artifact: { data: all.subarray(10, 30), mimeType: 'application/octet-stream' } });
        const loaded = (await adapter.loadArtifact(file('view'))) as { data: Uint8Array };
        expect([...loaded.data]).toEqual([...all.subarray(10, 30)]);
        await adapter.saveArtifact({ ...file('buffer'), artifact: { data: Buffer.from([0, 255, 0]), mimeType: 'application/octet-stream' } });
        expect([...(((await adapter.loadArtifact(file('buffer'))) as { data: Uint8Array }).data)]).toEqual([0, 255, 0]);
      });

      it('refuses more than maxArtifactBytes with artifact_too_large and stores nothing', async () => {
        await adapter.saveArtifact({ ...file(), artifact: { data: new Uint8Array(64), mimeType: 'a/b' } });
        await serviceError(adapter.saveArtifact({ ...file(), artifact: { data: new Uint8Array(65), mimeType: 'a/b' } }), 'artifact_too_large', { limit: 'maxArtifactBytes' });
        expect((await adapter.listVersions(file())).versions.map((v) => v.version)).toEqual([1]);
      });

      it('refuses malformed requests with invalid_artifact or invalid_scope, naming only the field', async () => {
        const data = bytes('x');
        await serviceError(adapter.saveArtifact({ ...file(''), artifact: { data, mimeType: 'a/b' } }), 'invalid_artifact', { field: 'filename' });
        await serviceError(adapter.saveArtifact({ ...file(`${SECRET}\u0000`), artifact: { data, mimeType: 'a/b' } }), 'invalid_artifact', { field: 'filename' });
        await serviceError(adapter.saveArtifact({ ...file(`${SECRET}\ud800`), artifact: { data, mimeType: 'a/b' } }), 'invalid_artifact', { field: 'filename' });
        await serviceError(adapter.saveArtifact({ ...file('x'.repeat(1025)), artifact: { data, mimeType: 'a/b' } }), 'invalid_artifact', { field: 'filename' });
        await serviceError(adapter.saveArtifact({ ...file(), artifact: { data, mimeType: '' } }), 'invalid_artifact', { field: 'mimeType' });
        await serviceError(adapter.saveArtifact({ ...file(), artifact: { data: `${SECRET}` as never, mimeType: 'a/b' } }), 'invalid_artifact', { field: 'data' });
        await serviceError(adapter.saveArtifact({ ...file(), artifact: { data, mimeType: 'a/b' }, customMetadata: [SECRET] as never }), 'invalid_artifact', { field: 'customMetadata' });
        await serviceError(adapter.saveArtifact({ ...file(), artifact: { data, mimeType: 'a/b' }, customMetadata: { big: 'x'.repeat(16 * 1024) } }), 'invalid_artifact', { field: 'customMetadata' });
        await serviceError(adapter.saveArtifact({ ...scope, userId: '', filename: 'f', artifact: { data, mimeType: 'a/b' } }), 'invalid_scope');
        await serviceError(adapter.loadArtifact({ ...file(), version: 0 }), 'invalid_artifact', { field: 'version' });
        await serviceError(adapter.deleteArtifact({ ...file(), version: 'first' as never }), 'invalid_artifact', { field: 'version' });
        await serviceError(adapter.listVersions({ ...scope } as never), 'invalid_artifact', { field: 'filename' });
        await serviceError(adapter.listArtifactKeys({ appName: scope.appName } as never), 'invalid_scope');
        expect(await adapter.listArtifactKeys(scope)).toEqual({ keys: [], next_cursor: null, has_more: false });
      });

      it('gives up before starting when the call signal is already aborted', async () => {
        const controller = new AbortController();
        const reason = new Error('caller gone');
        controller.abort(reason);
        await expect(adapter.saveArtifact({ ...file(), artifact: { data: bytes('x'), mimeType: 'a/b' } }, { signal: controller.signal, timeoutMs: 1000 })).rejects.toBe(reason);
        expect(await adapter.loadArtifact(file(), { signal: new AbortController().signal, timeoutMs: 1000 })).toBeUndefined();
      });
    });

    describe('deleteArtifact', () => {
      it('deletes one version, the latest, or all of them, and counts what it deleted', async () => {
        for (let i = 0; i < 4; i += 1) await save(undefined, `v${i + 1}`);
        expect(await adapter.deleteArtifact({ ...file(), version: 2 })).toBe(1);
        expect(await adapter.deleteArtifact({ ...file(), version: 2 })).toBe(0);
        expect(await adapter.deleteArtifact({ ...file(), version: 'latest' })).toBe(1);
        expect((await adapter.listVersions(file())).versions.map((v) => v.version)).toEqual([1, 3]);
        expect((await adapter.loadArtifact(file()))?.version).toBe(3);
        expect(await adapter.deleteArtifact(file())).toBe(2);
        expect(await adapter.deleteArtifact(file())).toBe(0);
        expect(await adapter.deleteArtifact({ ...file('never'), version: 'latest' })).toBe(0);
        expect(await adapter.loadArtifact(file())).toBeUndefined();
      });

      it('never gives a number twice: a save after deleting every version continues the sequence', async () => {
        await save();
        await save();
        await adapter.deleteArtifact({ ...file(), version: 'latest' });
        expect(await save()).toBe(3);
        expect(await adapter.deleteArtifact(file())).toBe(2);
        expect(await save(undefined, 'after')).toBe(4);
        expect((await adapter.listVersions(file())).versions.map((v) => v.version)).toEqual([4]);
        expect(await adapter.loadArtifact({ ...file(), version: 3 })).toBeUndefined();
      });
    });

    describe('listArtifactKeys', () => {
      it('lists the filenames with a version in bytewise order, without files whose versions are all deleted', async () => {
        for (const name of ['\u{1F600}', 'a', '\uFFFD', 'B', 'gone']) await save(name);
        await save('a');
        await save(undefined, 'x', {}, session);
        await adapter.deleteArtifact(file('gone'));
        expect(await adapter.listArtifactKeys(scope)).toEqual({ keys: ['B', 'a', '\uFFFD', '\u{1F600}'], next_cursor: null, has_more: false });
        expect((await adapter.listArtifactKeys(session)).keys).toEqual([`${SECRET}.txt`]);
      });

      it('pages with limit and cursor until has_more is false', async () => {
        for (const name of ['e', 'd', 'c', 'b', 'a']) await save(name);
        const first = await adapter.listArtifactKeys(scope, { limit: 2 });
        expect(first).toEqual({ keys: ['a', 'b'], next_cursor: expect.any(String), has_more: true });
        const second = await adapter.listArtifactKeys(scope, { limit: 2, cursor: first.next_cursor as string });
        expect(second).toMatchObject({ keys: ['c', 'd'], has_more: true });
        const last = await adapter.listArtifactKeys(scope, { cursor: second.next_cursor as string });
        expect(last).toEqual({ keys: ['e'], next_cursor: null, has_more: false });
        // a page of exactly the remaining keys has no next page
        expect(await adapter.listArtifactKeys(scope, { limit: 3, cursor: first.next_cursor as string })).toEqual({ keys: ['c', 'd', 'e'], next_cursor: null, has_more: false });
        // a cursor is a position, not a snapshot: a key saved behind it is not seen, one ahead of it is
        await save('bb');
        await save('ca');
        expect((await adapter.listArtifactKeys(scope, { limit: 3, cursor: first.next_cursor as string })).keys).toEqual(['bb', 'c', 'ca']);
      });

      it('without paging returns every key up to legacyListLimit, beyond it artifact_list_limit_exceeded', async () => {
        for (const name of ['a', 'b', 'c', 'd']) await save(name);
        expect((await adapter.listArtifactKeys(scope)).keys).toEqual(['a', 'b', 'c', 'd']);
        expect((await adapter.listArtifactKeys(scope, {})).keys).toEqual(['a', 'b', 'c', 'd']);
        await save('e');
        await serviceError(adapter.listArtifactKeys(scope), 'artifact_list_limit_exceeded', { limit: 'legacyListLimit' });
        expect((await adapter.listArtifactKeys(scope, { limit: 3 })).keys).toEqual(['a', 'b', 'c']);
      });

      it('refuses a limit above maxPageLimit, a malformed cursor and a cursor of versions with invalid_artifact', async () => {
        await save('a');
        await save('a');
        await serviceError(adapter.listArtifactKeys(scope, { limit: 4 }), 'invalid_artifact', { field: 'limit' });
        await serviceError(adapter.listArtifactKeys(scope, { limit: 0 }), 'invalid_artifact', { field: 'limit' });
        await serviceError(adapter.listArtifactKeys(scope, { cursor: `${SECRET}!` }), 'invalid_artifact', { field: 'cursor' });
        await serviceError(adapter.listArtifactKeys(scope, { cursor: Buffer.from(`["artifact_keys","${SECRET}"`).toString('base64url') }), 'invalid_artifact', { field: 'cursor' });
        await serviceError(adapter.listArtifactKeys(scope, { limit: 1, extra: 1 } as never), 'invalid_artifact', { field: 'extra' });
        const versions = await adapter.listVersions(file('a'), { limit: 1 });
        await serviceError(adapter.listArtifactKeys(scope, { cursor: versions.next_cursor as string }), 'invalid_artifact', { field: 'cursor' });
      });
    });

    describe('listVersions', () => {
      it('lists version metadata only, ascending, with paging', async () => {
        for (let i = 0; i < 5; i += 1) {
          await save(undefined, `v${i}`, { customMetadata: { i } });
          clock.advance(1);
        }
        await adapter.deleteArtifact({ ...file(), version: 2 });
        const first = await adapter.listVersions(file(), { limit: 2 });
        expect(first.versions.map((v) => v.version)).toEqual([1, 3]);
        expect(first.versions[0]).toEqual({ version: 1, mime_type: `text/${SECRET}`, size_bytes: 2, sha256: sha256(bytes('v0')), custom_metadata: { i: 0 }, created_at_ms: clock.wallNow() - 5 });
        expect(first.versions[0]).not.toHaveProperty('data');
        expect(first.has_more).toBe(true);
        const rest = await adapter.listVersions(file(), { limit: 3, cursor: first.next_cursor as string });
        expect(rest).toEqual({ versions: [expect.objectContaining({ version: 4 }), expect.objectContaining({ version: 5 })], next_cursor: null, has_more: false });
        expect(Object.isFrozen(rest.versions)).toBe(true);
        expect(await adapter.listVersions(file('none'))).toEqual({ versions: [], next_cursor: null, has_more: false });
      });

      it('without paging returns every version up to legacyListLimit, beyond it artifact_list_limit_exceeded', async () => {
        for (let i = 0; i < 4; i += 1) await save();
        expect((await adapter.listVersions(file())).versions).toHaveLength(4);
        await save();
        await serviceError(adapter.listVersions(file()), 'artifact_list_limit_exceeded', { limit: 'legacyListLimit' });
        expect((await adapter.listVersions(file(), { limit: 3 })).versions).toHaveLength(3);
        await save('z');
        const keys = await adapter.listArtifactKeys(scope, { limit: 1 });
        expect(keys.has_more).toBe(true);
        await serviceError(adapter.listVersions(file(), { cursor: keys.next_cursor as string }), 'invalid_artifact', { field: 'cursor' });
      });
    });

    describe('lifecycle', () => {
      it('reports frozen capabilities with contract_version 1 and immutable versions', () => {
        expect(Object.isFrozen(adapter.capabilities)).toBe(true);
        expect(adapter.capabilities).toMatchObject({ api_version: 1, contract_version: 1, immutable_versions: true, search: null });
      });

      it('refuses every operation after close with runtime_service_generation_stale', async () => {
        await save();
        await adapter.close();
        await adapter.close();
        await serviceError(save(), 'runtime_service_generation_stale');
        await serviceError(adapter.loadArtifact(file()), 'runtime_service_generation_stale');
        await serviceError(adapter.listArtifactKeys(scope), 'runtime_service_generation_stale');
        await serviceError(adapter.listVersions(file()), 'runtime_service_generation_stale');
        await serviceError(adapter.deleteArtifact(file()), 'runtime_service_generation_stale');
      });
    });
  });
}
