import { createHash } from 'node:crypto';
import { thrown } from '../../shared/testing/thrown';
import { RuntimeServiceError } from '../runtime-service.errors';
import { keyListing, pageOf, versionListing, MAX_ARTIFACT_CURSOR_CHARS } from './artifact-paging';
import { checkDeleteRequest, checkLoadRequest, checkSaveRequest, MAX_CUSTOM_METADATA_BYTES, ownedBytes } from './artifact-request';

const SCOPE = { appName: 'app', userId: 'u1' };
const data = Uint8Array.from([1, 2, 3]);
const save = (overrides: Record<string, unknown> = {}, artifact: Record<string, unknown> = {}) =>
  ({ ...SCOPE, filename: 'f.txt', artifact: { data, mimeType: 'text/plain', ...artifact }, ...overrides }) as never;
const refusal = (fn: () => unknown) => {
  const error = thrown(fn, RuntimeServiceError);
  return { code: error.code, details: error.details };
};
const invalid = (field: string) => ({ code: 'invalid_artifact', details: { field } });
const CONFIG = { maxArtifactBytes: 8, maxPageLimit: 10, legacyListLimit: 20 };

describe('artifact requests (spec 07 §1.2)', () => {
  it('checks a save and returns a frozen copy with the canonical metadata and the SHA-256 of the data', () => {
    const checked = checkSaveRequest(save({ sessionId: 's1', customMetadata: { b: 1, a: ['x'] } }), 8);
    expect(checked).toEqual({
      scope: { ...SCOPE, sessionId: 's1' },
      filename: 'f.txt',
      data: Uint8Array.from([1, 2, 3]),
      mimeType: 'text/plain',
      customMetadata: { a: ['x'], b: 1 },
      metadataText: '{"a":["x"],"b":1}',
      sha256: createHash('sha256').update(data).digest('hex'),
    });
    expect(Object.isFrozen(checked)).toBe(true);
    expect(Object.isFrozen(checked.customMetadata)).toBe(true);
    expect(checked.data).not.toBe(data);
    expect(checkSaveRequest(save(), 8).metadataText).toBe('{}');
  });

  it('filename: 1..1024 UTF-8 bytes, no U+0000, no lone surrogate', () => {
    expect(checkSaveRequest(save({ filename: 'é'.repeat(512) }), 8).filename).toHaveLength(512);
    expect(checkSaveRequest(save({ filename: '\u{1F600}' }), 8).filename).toBe('\u{1F600}');
    for (const filename of ['', 'é'.repeat(512) + 'x', 'a\u0000b', 'a\udc00', 7, undefined]) expect(refusal(() => checkSaveRequest(save({ filename }), 8))).toEqual(invalid('filename'));
  });

  it('mimeType: 1..255 UTF-8 bytes; data: a Uint8Array (a Buffer is one)', () => {
    expect(checkSaveRequest(save({}, { mimeType: 'x'.repeat(255) }), 8).mimeType).toHaveLength(255);
    expect(checkSaveRequest(save({}, { data: Buffer.from('ab') }), 8).data).toEqual(Uint8Array.from([97, 98]));
    for (const mimeType of ['', 'x'.repeat(256), 'é'.repeat(128), 'a\u0000']) expect(refusal(() => checkSaveRequest(save({}, { mimeType }), 8))).toEqual(invalid('mimeType'));
    for (const value of ['abc', [1, 2], new DataView(new ArrayBuffer(2)), new Uint16Array(2), undefined]) expect(refusal(() => checkSaveRequest(save({}, { data: value }), 8))).toEqual(invalid('data'));
    expect(refusal(() => checkSaveRequest(save({ artifact: 'x' }), 8))).toEqual(invalid('artifact'));
    expect(refusal(() => checkSaveRequest(save({}, { extra: 1 }), 8))).toEqual(invalid('extra'));
  });

  it('customMetadata: a JSON object of at most 16 KiB canonical JSON, without U+0000', () => {
    const fits = { k: 'x'.repeat(MAX_CUSTOM_METADATA_BYTES - 8) };
    expect(checkSaveRequest(save({ customMetadata: fits }), 8).metadataText).toHaveLength(MAX_CUSTOM_METADATA_BYTES);
    const tooBig = { k: 'x'.repeat(MAX_CUSTOM_METADATA_BYTES - 7) };
    for (const customMetadata of [tooBig, [], 'x', null, { a: 'b\u0000' }, { 'a\u0000': 1 }, { a: new Date(0) }, new Map(), { a: '\ud800' }]) {
      expect(refusal(() => checkSaveRequest(save({ customMetadata }), 8))).toEqual(invalid('customMetadata'));
    }
  });

  it('refuses more than maxArtifactBytes after the other checks, and unknown keys and getters without calling them', () => {
    expect(refusal(() => checkSaveRequest(save({}, { data: new Uint8Array(9) }), 8))).toEqual({ code: 'artifact_too_large', details: { limit: 'maxArtifactBytes' } });
    expect(refusal(() => checkSaveRequest(save({ filename: '' }, { data: new Uint8Array(9) }), 8))).toEqual(invalid('filename'));
    expect(refusal(() => checkSaveRequest(save({ metadata: {} }), 8))).toEqual(invalid('metadata'));
    const getter = jest.fn(() => 'f');
    expect(refusal(() => checkSaveRequest(Object.defineProperty(save({ filename: undefined }), 'filename', { get: getter, enumerable: true }), 8))).toEqual(invalid('filename'));
    expect(getter).not.toHaveBeenCalled();
    expect(refusal(() => checkSaveRequest({ ...SCOPE, appName: 'a\u0000' }, 8))).toEqual({ code: 'invalid_scope', details: undefined });
    expect(refusal(() => checkSaveRequest(new Proxy(save(), {}), 8))).toEqual({ code: 'invalid_scope', details: undefined });
  });

  it('load and delete versions: a safe integer ≥ 1, or latest for a delete', () => {
    expect(checkLoadRequest({ ...SCOPE, filename: 'f' }).version).toBeNull();
    expect(checkLoadRequest({ ...SCOPE, filename: 'f', version: 3 }).version).toBe(3);
    expect(checkDeleteRequest({ ...SCOPE, filename: 'f', version: 'latest' }).version).toBe('latest');
    expect(checkDeleteRequest({ ...SCOPE, filename: 'f' }).version).toBeNull();
    for (const version of [0, -1, 1.5, '1', 2 ** 53, 'latest']) expect(refusal(() => checkLoadRequest({ ...SCOPE, filename: 'f', version }))).toEqual(invalid('version'));
    for (const version of [0, 'all', null]) expect(refusal(() => checkDeleteRequest({ ...SCOPE, filename: 'f', version }))).toEqual(invalid('version'));
  });

  it('gives bytes read from a pooled Buffer a memory of their own', () => {
    const pooled = Buffer.from('abc');
    const owned = ownedBytes(pooled);
    expect(owned.buffer.byteLength).toBe(3);
    expect(Buffer.from(owned).toString()).toBe('abc');
    const whole = new Uint8Array(4);
    expect(ownedBytes(whole).buffer).toBe(whole.buffer);
  });
});

describe('artifact listings', () => {
  it('are unpaged without limit and cursor, paged with either', () => {
    expect(keyListing(undefined, CONFIG)).toEqual({ paged: false, limit: 20, after: null });
    expect(keyListing({}, CONFIG)).toEqual({ paged: false, limit: 20, after: null });
    expect(keyListing({ limit: 5 }, CONFIG)).toEqual({ paged: true, limit: 5, after: null });
    const page = pageOf(['a', 'b', 'c'], { paged: true, limit: 2, after: null }, (key) => key, 'keys');
    expect(keyListing({ cursor: page.next_cursor }, CONFIG)).toEqual({ paged: true, limit: 10, after: 'b' });
    const versions = pageOf([{ version: 4 }, { version: 9 }], { paged: true, limit: 1, after: null }, (item) => item.version, 'versions');
    expect(versionListing({ cursor: versions.next_cursor, limit: 3 }, CONFIG)).toEqual({ paged: true, limit: 3, after: 4 });
  });

  it('encode the cursor as base64url of the canonical JSON of the position, injectively', () => {
    const cursorOf = (key: string) => pageOf([key, 'zzz'], { paged: true, limit: 1, after: null }, (k) => k, 'keys').next_cursor;
    expect(cursorOf('a,b')).toBe(Buffer.from('["artifact_keys","a,b"]').toString('base64url'));
    expect(cursorOf('a"')).not.toBe(cursorOf('a\\'));
    const longest = cursorOf('\u0001'.repeat(1024)) as string;
    expect(longest.length).toBeLessThanOrEqual(MAX_ARTIFACT_CURSOR_CHARS);
    expect(keyListing({ cursor: longest }, CONFIG).after).toBe('\u0001'.repeat(1024));
  });

  it('refuse a limit out of 1..maxPageLimit, a malformed or foreign cursor, and a page that is not an object', () => {
    for (const limit of [0, 11, 1.5, '2']) expect(refusal(() => keyListing({ limit }, CONFIG))).toEqual(invalid('limit'));
    const foreign = (parts: unknown[]) => Buffer.from(JSON.stringify(parts)).toString('base64url');
    for (const cursor of ['', '!!', foreign(['artifact_keys', '']), foreign(['artifact_keys', 'a', 'b']), foreign(['artifact_versions', 1])]) {
      expect(refusal(() => keyListing({ cursor }, CONFIG))).toEqual(invalid('cursor'));
    }
    for (const cursor of [foreign(['artifact_versions', 0]), foreign(['artifact_versions', '1']), foreign(['artifact_keys', 'a'])]) {
      expect(refusal(() => versionListing({ cursor }, CONFIG))).toEqual(invalid('cursor'));
    }
    expect(refusal(() => keyListing({ cursor: 5 }, CONFIG))).toEqual(invalid('cursor'));
    expect(refusal(() => keyListing([], CONFIG))).toEqual(invalid('page'));
  });

  it('unpaged, refuse more than legacyListLimit entries', () => {
    expect(pageOf([1, 2], { paged: false, limit: 2, after: null }, (n) => n, 'versions')).toEqual({ items: [1, 2], next_cursor: null, has_more: false });
    expect(refusal(() => pageOf([1, 2, 3], { paged: false, limit: 2, after: null }, (n) => n, 'versions'))).toEqual({ code: 'artifact_list_limit_exceeded', details: { limit: 'legacyListLimit' } });
  });
});
