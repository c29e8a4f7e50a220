import { systemClock, type Clock } from '../../shared/time/clock';
import { compareUtf8 } from '../../shared/text/utf8-order';
import { RuntimeServiceError } from '../runtime-service.errors';
import { checkArtifactScope, scopeKey } from '../service-scope';
import type { AdapterCallOptions, ArtifactFileRequest, ArtifactRecord, ArtifactScope, ArtifactVersionInfo, PageRequest, SaveArtifactRequest } from '../services.types';
import { resolveArtifactAdapterConfig, type InMemoryArtifactConfig } from './artifact-adapter-config';
import type { ArtifactAdapter, ArtifactKeyPage, ArtifactVersionPage, DeleteArtifactRequest, LoadArtifactRequest } from './artifact-adapter.types';
import { IN_MEMORY_ARTIFACT_CAPABILITIES } from './artifact-capabilities';
import { artifactRecord, savedVersionInfo } from './artifact-records';
import { keyListing, pageOf, versionListing } from './artifact-paging';
import { checkDeleteRequest, checkFileRequest, checkLoadRequest, checkSaveRequest } from './artifact-request';
import { closedAdapter, throwIfAborted } from './artifact-store-failure';

/** Options of an {@link InMemoryArtifactAdapter}. */
export interface InMemoryArtifactAdapterOptions {
  /** The component's `adapterConfig` (spec 07 §2), checked by `resolveArtifactAdapterConfig('in_memory', …)`. @default {} */
  readonly adapterConfig?: unknown;
  /** Source of `created_at_ms` (`wallNow()`). @default systemClock */
  readonly clock?: Clock;
}

interface StoredVersion {
  readonly info: ArtifactVersionInfo;
  readonly data: Uint8Array;
  /** What the version costs against the byte quotas. */
  readonly charged: number;
}

interface StoredFile {
  /** Never lowered: a number once given is never given again, even after every version is deleted. */
  nextVersion: number;
  /** In ascending order, since versions only grow. */
  readonly versions: Map<number, StoredVersion>;
}

interface StoredScope {
  readonly files: Map<string, StoredFile>;
  bytes: number;
  artifacts: number;
  /** Filenames with at least one version, bytewise; rebuilt after a change. */
  sortedKeys: string[] | null;
}

/**
 * The ephemeral profile's artifact adapter (spec 07 §2): one adapter shared by every scope, its
 * versions in process memory, its quotas enforced across all scopes together. Every operation runs
 * synchronously once started, so no two interleave.
 *
 * @example
 * const artifacts = new InMemoryArtifactAdapter({ adapterConfig: { maxTotalBytes: 64 * 1024 * 1024 } });
 * const version = await artifacts.saveArtifact({ appName: 'a', userId: 'u', filename: 'notes.txt', artifact: { data, mimeType: 'text/plain' } });
 */
export class InMemoryArtifactAdapter implements ArtifactAdapter {
  readonly id = 'in_memory_artifact';
  readonly capabilities = IN_MEMORY_ARTIFACT_CAPABILITIES;
  /** The resolved `adapterConfig` (frozen). */
  readonly config: InMemoryArtifactConfig;
  readonly #clock: Clock;
  readonly #scopes = new Map<string, StoredScope>();
  #bytes = 0;
  #artifacts = 0;
  #closed = false;

  /** Throws `invalid_runtime_service_component_config` for a bad `adapterConfig`. */
  constructor(options: InMemoryArtifactAdapterOptions = {}) {
    this.config = resolveArtifactAdapterConfig('in_memory', options.adapterConfig);
    this.#clock = options.clock ?? systemClock;
  }

  /** Versions held and the bytes charged for them, over every scope. */
  usage(): { readonly artifacts: number; readonly bytes: number } {
    return Object.freeze({ artifacts: this.#artifacts, bytes: this.#bytes });
  }

  async saveArtifact(request: SaveArtifactRequest, call?: AdapterCallOptions): Promise<number> {
    this.#enter(call);
    const save = checkSaveRequest(request, this.config.maxArtifactBytes);
    const charged = save.data.byteLength + Buffer.byteLength(save.metadataText) + Buffer.byteLength(save.mimeType) + Buffer.byteLength(save.filename);
    const scope = this.#scope(save.scope, true) as StoredScope;
    const quota = this.#refusedQuota(scope, charged);
    if (quota !== null) throw new RuntimeServiceError('artifact_quota_exceeded', { limit: quota });
    let file = scope.files.get(save.filename);
    if (file === undefined) {
      file = { nextVersion: 1, versions: new Map() };
      scope.files.set(save.filename, file);
    }
    const version = file.nextVersion;
    file.nextVersion += 1;
    const info = savedVersionInfo(save, version, this.#clock);
    if (file.versions.size === 0) scope.sortedKeys = null;
    file.versions.set(version, { info, data: save.data, charged });
    this.#charge(scope, 1, charged);
    return version;
  }

  async loadArtifact(request: LoadArtifactRequest, call?: AdapterCallOptions): Promise<ArtifactRecord | undefined> {
    this.#enter(call);
    const load = checkLoadRequest(request);
    const versions = this.#scope(load.scope, false)?.files.get(load.filename)?.versions;
    if (versions === undefined) return undefined;
    const stored = load.version === null ? latest(versions) : versions.get(load.version);
    // a copy: the stored bytes stay immutable whatever the caller does with its record
    return stored === undefined ? undefined : artifactRecord(stored.info, new Uint8Array(stored.data));
  }

  async listArtifactKeys(scope: ArtifactScope, page?: PageRequest, call?: AdapterCallOptions): Promise<ArtifactKeyPage> {
    this.#enter(call);
    const checked = checkArtifactScope(scope);
    const listing = keyListing(page, this.config);
    const stored = this.#scope(checked, false);
    const keys = stored === undefined ? [] : sortedKeys(stored);
    const start = listing.after === null ? 0 : firstAfter(keys, listing.after);
    const result = pageOf(keys.slice(start, start + listing.limit + 1), listing, (key) => key, 'keys');
    return Object.freeze({ keys: result.items, next_cursor: result.next_cursor, has_more: result.has_more });
  }

  async listVersions(request: ArtifactFileRequest, page?: PageRequest, call?: AdapterCallOptions): Promise<ArtifactVersionPage> {
    this.#enter(call);
    const file = checkFileRequest(request);
    const listing = versionListing(page, this.config);
    const versions = this.#scope(file.scope, false)?.files.get(file.filename)?.versions;
    const candidates: ArtifactVersionInfo[] = [];
    for (const stored of versions?.values() ?? []) {
      if (listing.after !== null && stored.info.version <= listing.after) continue;
      candidates.push(stored.info);
      if (candidates.length > listing.limit) break;
    }
    const result = pageOf(candidates, listing, (info) => info.version, 'versions');
    return Object.freeze({ versions: result.items, next_cursor: result.next_cursor, has_more: result.has_more });
  }

  async deleteArtifact(request: DeleteArtifactRequest, call?: AdapterCallOptions): Promise<number> {
    this.#enter(call);
    const deletion = checkDeleteRequest(request);
    const scope = this.#scope(deletion.scope, false);
    const versions = scope?.files.get(deletion.filename)?.versions;
    if (scope === undefined || versions === undefined || versions.size === 0) return 0;
    const doomed = deletion.version === null ? [...versions.keys()] : [deletion.version === 'latest' ? (latest(versions)?.info.version ?? 0) : deletion.version];
    let deleted = 0;
    for (const version of doomed) {
      const stored = versions.get(version);
      if (stored === undefined) continue;
      versions.delete(version);
      this.#charge(scope, -1, -stored.charged);
      deleted += 1;
    }
    if (versions.size === 0) scope.sortedKeys = null;
    return deleted;
  }

  /** Drops every version and refuses further calls (`runtime_service_generation_stale`). Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#scopes.clear();
    this.#bytes = 0;
    this.#artifacts = 0;
  }

  #enter(call: AdapterCallOptions | undefined): void {
    if (this.#closed) throw closedAdapter();
    throwIfAborted(call);
  }

  #scope(scope: ArtifactScope, create: boolean): StoredScope | undefined {
    const key = scopeKey('artifact', scope);
    let stored = this.#scopes.get(key);
    if (stored === undefined && create) {
      stored = { files: new Map(), bytes: 0, artifacts: 0, sortedKeys: null };
      this.#scopes.set(key, stored);
    }
    return stored;
  }

  #refusedQuota(scope: StoredScope, charged: number): keyof InMemoryArtifactConfig | null {
    const { maxScopeArtifacts, maxScopeBytes, maxTotalArtifacts, maxTotalBytes } = this.config;
    if (scope.artifacts + 1 > maxScopeArtifacts) return 'maxScopeArtifacts';
    if (scope.bytes + charged > maxScopeBytes) return 'maxScopeBytes';
    if (this.#artifacts + 1 > maxTotalArtifacts) return 'maxTotalArtifacts';
    if (this.#bytes + charged > maxTotalBytes) return 'maxTotalBytes';
    return null;
  }

  #charge(scope: StoredScope, artifacts: number, bytes: number): void {
    scope.artifacts += artifacts;
    scope.bytes += bytes;
    this.#artifacts += artifacts;
    this.#bytes += bytes;
  }
}

function latest(versions: Map<number, StoredVersion>): StoredVersion | undefined {
  let last: StoredVersion | undefined;
  for (const stored of versions.values()) last = stored;
  return last;
}

function sortedKeys(scope: StoredScope): string[] {
  if (scope.sortedKeys === null) {
    scope.sortedKeys = [...scope.files].filter(([, file]) => file.versions.size > 0).map(([name]) => name).sort(compareUtf8);
  }
  return scope.sortedKeys;
}

/** Index of the first key bytewise after `after`. */
function firstAfter(keys: readonly string[], after: string): number {
  let low = 0;
  let high = keys.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compareUtf8(keys[middle], after) <= 0) low = middle + 1;
    else high = middle;
  }
  return low;
}
