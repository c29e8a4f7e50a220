import { promises as fs } from 'node:fs';
import { AdapterGate } from '../adapter-gate';
import { isAbsolute, join } from 'node:path';
import { systemClock, type Clock } from '../../shared/time/clock';
import { randomId } from '../../shared/ids/random-id';
import { compareUtf8 } from '../../shared/text/utf8-order';
import { RuntimeServiceError } from '../runtime-service.errors';
import { checkArtifactScope, scopeKey } from '../service-scope';
import type { AdapterCallOptions, ArtifactFileRequest, ArtifactRecord, ArtifactScope, ArtifactVersionInfo, PageRequest, SaveArtifactRequest } from '../services.types';
import { resolveArtifactAdapterConfig, type FilesystemArtifactConfig } from './artifact-adapter-config';
import type { ArtifactAdapter, ArtifactKeyPage, ArtifactVersionPage, DeleteArtifactRequest, LoadArtifactRequest } from './artifact-adapter.types';
import { FILESYSTEM_ARTIFACT_CAPABILITIES } from './artifact-capabilities';
import { keyListing, pageOf, versionListing } from './artifact-paging';
import { artifactRecord, savedVersionInfo } from './artifact-records';
import { checkDeleteRequest, checkFileRequest, checkLoadRequest, checkSaveRequest, type CheckedSave } from './artifact-request';
import { closedAdapter, corruptRecord, filesystemStoreFailure, throwIfAborted } from './artifact-store-failure';
import { ensureDirectory, errnoOf, listDirectory, removeFilesOlderThan, readTextFile, readWholeFile, ScanBudget, syncDirectory, unlinkIfPresent, writeNewFile } from './filesystem-artifact-io';
import {
  fileDirectory,
  HEAD_FILE,
  headDocument,
  isShardName,
  parseHeadDocument,
  parseVersionDocument,
  parseVersionFileName,
  SCOPE_SHARDS,
  scopeShard,
  temporaryPath,
  versionDocument,
  versionFileName,
  type ScopeShard,
} from './filesystem-artifact-layout';

/** Options of a {@link FilesystemArtifactAdapter}. */
export interface FilesystemArtifactAdapterOptions {
  /** The component's `adapterConfig` (spec 07 §2), checked by `resolveArtifactAdapterConfig('filesystem', …)`. @default {} */
  readonly adapterConfig?: unknown;
  /** Source of `created_at_ms` and of the age of temporaries (`wallNow()`). @default systemClock */
  readonly clock?: Clock;
}

const UNUSABLE_ROOT = /[\u0000\p{Cs}]/u;

/** The version read from its two files, or why not. */
type StoredVersion = { readonly info: ArtifactVersionInfo; readonly filename: string };

/**
 * The durable profile's artifact adapter with `artifactRoot` (spec 07 §2). A version is
 * `<root>/scope-shards/<scope key>/<sha256 of filename>/<version>.bin` with its metadata (and
 * filename) in `<version>.json`; `head.json` keeps the next number to try. Files are written under a
 * temporary name in the scope's `tmp/` directory and fsynced, then published with an exclusive
 * `link` (which fails on an existing name, so a number taken by another instance on the same root
 * moves the save on to the next) and the directory is fsynced. `<version>.bin` is the claim of the
 * number and `<version>.json` the commit that makes the version visible; a delete removes the
 * `.json` and truncates the `.bin` to zero bytes, so the number stays taken forever. Reads and
 * listings count every directory entry they read against `maxScanEntries`. Filesystem failures are
 * `runtime_service_store_unavailable` with the errno code only, never a path.
 *
 * @example
 * const artifacts = new FilesystemArtifactAdapter('/var/lib/agent/artifacts');
 * await artifacts.start();
 * const version = await artifacts.saveArtifact({ appName: 'a', userId: 'u', filename: 'notes.txt', artifact: { data, mimeType: 'text/plain' } });
 */
export class FilesystemArtifactAdapter implements ArtifactAdapter {
  readonly id = 'filesystem_artifact';
  readonly capabilities = FILESYSTEM_ARTIFACT_CAPABILITIES;
  /** The resolved `adapterConfig` (frozen). */
  readonly config: FilesystemArtifactConfig;
  readonly #root: string;
  readonly #clock: Clock;
  readonly #gate = new AdapterGate(closedAdapter);

  /**
   * Throws `invalid_runtime_service_component_config` for a bad `adapterConfig`, and
   * `runtime_service_bundle_start_failed` `{stage: 'artifact', reason: 'artifact_root_unavailable'}`
   * for a root that is not an absolute path without U+0000 or a lone surrogate.
   */
  constructor(artifactRoot: string, options: FilesystemArtifactAdapterOptions = {}) {
    this.config = resolveArtifactAdapterConfig('filesystem', options.adapterConfig);
    if (typeof artifactRoot !== 'string' || !isAbsolute(artifactRoot) || UNUSABLE_ROOT.test(artifactRoot)) throw rootUnavailable();
    this.#root = artifactRoot;
    this.#clock = options.clock ?? systemClock;
  }

  /**
   * Checks that the root is a directory this process can write: creates `scope-shards` inside it
   * and writes, syncs and removes a probe file there. Else `runtime_service_bundle_start_failed`
   * `{stage: 'artifact', reason: 'artifact_root_unavailable'}`. May be called again to re-check.
   */
  async start(): Promise<void> {
    try {
      if (!(await fs.stat(this.#root)).isDirectory()) throw rootUnavailable();
      const shards = join(this.#root, SCOPE_SHARDS);
      await ensureDirectory(shards);
      const probe = join(shards, `.probe-${randomId('')}`);
      await writeNewFile(probe, 'probe');
      await fs.unlink(probe);
    } catch {
      throw rootUnavailable();
    }
  }

  /** Removes the scope's temporary files older than `recoveryGraceMs` (left by a crashed or failed save). */
  openScope(key: string, call?: AdapterCallOptions): Promise<void> {
    return this.#operate(call, async () => {
      if (typeof key !== 'string' || !isShardName(key)) throw new RuntimeServiceError('invalid_scope');
      await removeFilesOlderThan(scopeShard(this.#root, key).temporaries, this.#clock.wallNow() - this.config.recoveryGraceMs);
    });
  }

  saveArtifact(request: SaveArtifactRequest, call?: AdapterCallOptions): Promise<number> {
    return this.#operate(call, async () => {
      const save = checkSaveRequest(request, this.config.maxArtifactBytes);
      const shard = scopeShard(this.#root, scopeKey('artifact', save.scope));
      const directory = fileDirectory(shard, save.filename);
      await ensureDirectory(join(this.#root, SCOPE_SHARDS));
      await ensureDirectory(shard.directory);
      await ensureDirectory(shard.temporaries);
      await ensureDirectory(directory);
      const temporaries: string[] = [];
      try {
        const data = temporaryPath(shard, '.bin');
        temporaries.push(data);
        await writeNewFile(data, save.data);
        throwIfAborted(call);
        const version = await this.#claim(data, directory, await this.#head(directory));
        await this.#commit(shard, directory, save, version, temporaries);
        return version;
      } finally {
        for (const path of temporaries) await unlinkIfPresent(path).catch(() => undefined);
      }
    });
  }

  loadArtifact(request: LoadArtifactRequest, call?: AdapterCallOptions): Promise<ArtifactRecord | undefined> {
    return this.#operate(call, async () => {
      const load = checkLoadRequest(request);
      const directory = fileDirectory(scopeShard(this.#root, scopeKey('artifact', load.scope)), load.filename);
      const candidates = load.version !== null ? [load.version] : (await this.#liveVersions(directory, new ScanBudget(this.config.maxScanEntries))).reverse();
      for (const version of candidates) {
        const stored = await this.#readVersion(directory, version);
        if (stored === undefined) continue;
        const data = await readWholeFile(join(directory, versionFileName(version, 'bin')));
        if (data !== undefined && data.byteLength === stored.info.size_bytes) return artifactRecord(stored.info, data);
        // deleted while it was read: its .json is gone; a .json still there with other bytes is damage
        if ((await this.#readVersion(directory, version)) !== undefined) throw corruptRecord();
      }
      return undefined;
    });
  }

  listArtifactKeys(scope: ArtifactScope, page?: PageRequest, call?: AdapterCallOptions): Promise<ArtifactKeyPage> {
    return this.#operate(call, async () => {
      const checked = checkArtifactScope(scope);
      const listing = keyListing(page, this.config);
      const shard = scopeShard(this.#root, scopeKey('artifact', checked));
      const budget = new ScanBudget(this.config.maxScanEntries);
      const keys: string[] = [];
      for (const name of await listDirectory(shard.directory, budget)) {
        if (!isShardName(name)) continue;
        const directory = join(shard.directory, name);
        for (const version of (await this.#liveVersions(directory, budget)).reverse()) {
          const stored = await this.#readVersion(directory, version);
          if (stored === undefined) continue;
          if (fileDirectory(shard, stored.filename) !== directory) throw corruptRecord();
          if (listing.after === null || compareUtf8(stored.filename, listing.after) > 0) keys.push(stored.filename);
          break;
        }
      }
      keys.sort(compareUtf8);
      const result = pageOf(keys.slice(0, listing.limit + 1), listing, (key) => key, 'keys');
      return Object.freeze({ keys: result.items, next_cursor: result.next_cursor, has_more: result.has_more });
    });
  }

  listVersions(request: ArtifactFileRequest, page?: PageRequest, call?: AdapterCallOptions): Promise<ArtifactVersionPage> {
    return this.#operate(call, async () => {
      const file = checkFileRequest(request);
      const listing = versionListing(page, this.config);
      const directory = fileDirectory(scopeShard(this.#root, scopeKey('artifact', file.scope)), file.filename);
      const infos: ArtifactVersionInfo[] = [];
      for (const version of await this.#liveVersions(directory, new ScanBudget(this.config.maxScanEntries))) {
        if (listing.after !== null && version <= listing.after) continue;
        const stored = await this.#readVersion(directory, version);
        if (stored !== undefined) infos.push(stored.info);
        if (infos.length > listing.limit) break;
      }
      const result = pageOf(infos, listing, (info) => info.version, 'versions');
      return Object.freeze({ versions: result.items, next_cursor: result.next_cursor, has_more: result.has_more });
    });
  }

  deleteArtifact(request: DeleteArtifactRequest, call?: AdapterCallOptions): Promise<number> {
    return this.#operate(call, async () => {
      const deletion = checkDeleteRequest(request);
      const directory = fileDirectory(scopeShard(this.#root, scopeKey('artifact', deletion.scope)), deletion.filename);
      let doomed: number[];
      if (typeof deletion.version === 'number') doomed = [deletion.version];
      else {
        const live = await this.#liveVersions(directory, new ScanBudget(this.config.maxScanEntries));
        doomed = deletion.version === 'latest' ? live.slice(-1) : live;
      }
      let deleted = 0;
      for (const version of doomed) {
        if (!(await unlinkIfPresent(join(directory, versionFileName(version, 'json'))))) continue;
        deleted += 1;
        // the emptied .bin keeps the number taken, so it is never given again
        await fs.truncate(join(directory, versionFileName(version, 'bin')), 0).catch((error: unknown) => {
          if (errnoOf(error) !== 'ENOENT') throw error;
        });
      }
      if (deleted > 0) await syncDirectory(directory);
      return deleted;
    });
  }

  /** Refuses new operations (`runtime_service_generation_stale`) and waits for those in flight. Idempotent. */
  close(): Promise<void> {
    return this.#gate.close();
  }

  #operate<T>(call: AdapterCallOptions | undefined, work: () => Promise<T>): Promise<T> {
    return this.#gate.run(async () => {
      throwIfAborted(call);
      try {
        return await work();
      } catch (error) {
        // a filesystem error names the path it failed on: only its errno code leaves
        throw RuntimeServiceError.isRuntimeServiceError(error) || (call?.signal?.aborted === true && error === call.signal.reason) ? error : filesystemStoreFailure(error);
      }
    });
  }

  /** The number to try first: `head.json`'s `next_version`; 1 without a readable one (trying from 1 is slow, never wrong). */
  async #head(directory: string): Promise<number> {
    const text = await readTextFile(join(directory, HEAD_FILE));
    try {
      return text === undefined ? 1 : parseHeadDocument(text);
    } catch {
      return 1;
    }
  }

  /** Publishes the data file as the first free `<version>.bin` from `first` on; at most `maxScanEntries` numbers are tried. */
  async #claim(data: string, directory: string, first: number): Promise<number> {
    const tries = new ScanBudget(this.config.maxScanEntries);
    for (let version = first; ; version += 1) {
      tries.take();
      try {
        await fs.link(data, join(directory, versionFileName(version, 'bin')));
        return version;
      } catch (error) {
        if (errnoOf(error) !== 'EEXIST') throw error;
      }
    }
  }

  /** Writes and links `<version>.json` (the version becomes visible), syncs the directory and advances `head.json`. */
  async #commit(shard: ScopeShard, directory: string, save: CheckedSave, version: number, temporaries: string[]): Promise<void> {
    const info = savedVersionInfo(save, version, this.#clock);
    try {
      const metadata = temporaryPath(shard, '.json');
      temporaries.push(metadata);
      await writeNewFile(metadata, versionDocument(save.filename, info));
      await fs.link(metadata, join(directory, versionFileName(version, 'json')));
      await syncDirectory(directory);
    } catch (error) {
      // the number stays taken; its bytes need not stay
      await fs.truncate(join(directory, versionFileName(version, 'bin')), 0).catch(() => undefined);
      throw errnoOf(error) === 'EEXIST' ? corruptRecord() : error;
    }
    // head.json only says where to start trying: a stale one costs a few failed links, never a reused number
    if ((await this.#head(directory)) > version) return;
    const head = temporaryPath(shard, '.head');
    temporaries.push(head);
    await writeNewFile(head, headDocument(save.filename, version + 1));
    await fs.rename(head, join(directory, HEAD_FILE));
    await syncDirectory(directory);
  }

  /** The visible versions of a file directory (those with a `.json`), ascending. */
  async #liveVersions(directory: string, budget: ScanBudget): Promise<number[]> {
    const versions: number[] = [];
    for (const name of await listDirectory(directory, budget)) {
      const parsed = parseVersionFileName(name);
      if (parsed?.kind === 'json') versions.push(parsed.version);
    }
    return versions.sort((a, b) => a - b);
  }

  /** The `.json` of a version, or `undefined` once it is deleted. */
  async #readVersion(directory: string, version: number): Promise<StoredVersion | undefined> {
    const text = await readTextFile(join(directory, versionFileName(version, 'json')));
    return text === undefined ? undefined : parseVersionDocument(text, version);
  }
}

function rootUnavailable(): RuntimeServiceError {
  return new RuntimeServiceError('runtime_service_bundle_start_failed', { stage: 'artifact', reason: 'artifact_root_unavailable' });
}
