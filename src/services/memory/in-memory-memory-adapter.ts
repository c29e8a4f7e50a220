import type { JsonObject } from '../../json/json.types';
import { RuntimeServiceError } from '../runtime-service.errors';
import { checkMemoryScope, scopeKey } from '../service-scope';
import type { AdapterCallOptions, ComponentCapabilities, IngestionCount, MemoryHit, MemoryScope } from '../services.types';
import { resolveMemoryAdapterConfig, type InMemoryMemoryAdapterConfig } from './memory-adapter-config';
import type { MemoryAdapter } from './memory-adapter.types';
import { memoryEntriesOf, type MemoryEntryBatch } from './memory-entries';
import { assertCallLive, checkCallOptions, checkIngestion, checkSearch, checkSessionInput } from './memory-requests';
import { rankByTokenOverlap, wordTokens, type RankableEntry } from './token-overlap-ranking';

/** What the in-memory memory adapter reports of itself (spec 07 §1.5). */
export const IN_MEMORY_MEMORY_CAPABILITIES: ComponentCapabilities = Object.freeze({
  api_version: 1,
  contract_version: 2,
  immutable_versions: false,
  persistence: 'volatile',
  durable: false,
  search: 'token_overlap',
  idempotent_ingestion: true,
  incremental_events: true,
  erasure_epoch_fencing: true,
  quota_scope: 'shared_adapter',
  idle_reclamation: 'not_required_shared_adapter',
});

interface StoredEntry extends RankableEntry {
  readonly metadata: JsonObject;
  /** What the entry counts against `maxTotalBytes`: content plus canonical metadata bytes. */
  readonly bytes: number;
}

/** One scope: its erasure epoch (kept after its entries are gone) and its entries by `event_id`. */
interface ScopeMemory {
  epoch: number;
  readonly entries: Map<string, StoredEntry>;
}

/** How much the adapter holds, over every scope. */
export interface InMemoryMemoryUsage {
  readonly entries: number;
  readonly bytes: number;
  readonly scopes: number;
}

/**
 * The memory adapter of the ephemeral profile: process memory, one adapter shared by every scope,
 * so `maxEntries` and `maxTotalBytes` are global (`memory_quota_exceeded`, `details.limit`). Search
 * ranks by token overlap; ingestion is idempotent by `event_id`; erasure raises the scope's epoch and
 * fences ingestion of older epochs (`memory_epoch_fenced`). Every operation checks its whole request
 * first and then changes the state in one synchronous step, so a refused request changes nothing.
 *
 * @example
 * const memory = new InMemoryMemoryAdapter({ maxResults: 10 });
 * await memory.addEvents({ appName: 'app', userId: 'u1' }, events, { epoch: 0 });
 * const { memories } = await memory.searchMemory({ appName: 'app', userId: 'u1', query: 'invoice total' });
 */
export class InMemoryMemoryAdapter implements MemoryAdapter {
  readonly id = 'in_memory_memory';
  readonly capabilities = IN_MEMORY_MEMORY_CAPABILITIES;
  /** The `adapterConfig` with its defaults. */
  readonly config: InMemoryMemoryAdapterConfig;
  readonly #scopes = new Map<string, ScopeMemory>();
  #entries = 0;
  #bytes = 0;
  #closed = false;

  /** Throws `invalid_runtime_service_component_config` for a bad `adapterConfig` ({@link resolveMemoryAdapterConfig}). */
  constructor(adapterConfig?: unknown) {
    this.config = resolveMemoryAdapterConfig('in_memory', adapterConfig);
  }

  /** Every `user_message` / `final_output` event with text of the session becomes an entry, at the scope's current epoch. */
  async addSessionToMemory(input: Parameters<MemoryAdapter['addSessionToMemory']>[0], options?: AdapterCallOptions): Promise<IngestionCount> {
    this.#begin(options);
    const checked = checkSessionInput(input);
    const batch = memoryEntriesOf(checked.scope, checked.events, this.config, checked.sessionId);
    return this.#store(this.#scope(checked.scope), batch);
  }

  /** Incremental, idempotent by `event_id`; `ingestion.epoch` below the scope's erasure epoch → `memory_epoch_fenced`. */
  async addEvents(scope: MemoryScope, events: Parameters<MemoryAdapter['addEvents']>[1], ingestion: Parameters<MemoryAdapter['addEvents']>[2], options?: AdapterCallOptions): Promise<IngestionCount> {
    this.#begin(options);
    const checkedScope = checkMemoryScope(scope);
    const { epoch } = checkIngestion(ingestion);
    const batch = memoryEntriesOf(checkedScope, events, this.config);
    const memory = this.#scope(checkedScope);
    if (epoch < memory.epoch) throw new RuntimeServiceError('memory_epoch_fenced', { epoch, current_epoch: memory.epoch });
    return this.#store(memory, batch);
  }

  /** The scope's best entries for `query`, at most `min(limit, maxResults)` and `maxResultBytes` of content. */
  async searchMemory(request: Parameters<MemoryAdapter['searchMemory']>[0], options?: AdapterCallOptions): Promise<{ readonly memories: readonly MemoryHit[] }> {
    this.#begin(options);
    const search = checkSearch(request, this.config);
    const entries = this.#scopes.get(scopeKey('memory', search.scope))?.entries.values() ?? [];
    const memories = rankByTokenOverlap(entries, search.query, { limit: search.limit, maxResultBytes: this.config.maxResultBytes });
    return Object.freeze({ memories: Object.freeze(memories) });
  }

  /** Raises the scope's erasure epoch by one and deletes its entries; returns the new epoch. */
  async eraseMemory(scope: MemoryScope, options?: AdapterCallOptions): Promise<{ readonly epoch: number }> {
    this.#begin(options);
    const memory = this.#scope(checkMemoryScope(scope));
    for (const entry of memory.entries.values()) this.#bytes -= entry.bytes;
    this.#entries -= memory.entries.size;
    memory.entries.clear();
    memory.epoch += 1;
    return Object.freeze({ epoch: memory.epoch });
  }

  /** What the adapter holds now. */
  usage(): InMemoryMemoryUsage {
    return Object.freeze({ entries: this.#entries, bytes: this.#bytes, scopes: this.#scopes.size });
  }

  /** Drops every entry and epoch; later calls reject with `runtime_service_generation_stale`. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#scopes.clear();
    this.#entries = 0;
    this.#bytes = 0;
  }

  #begin(options: AdapterCallOptions | undefined): void {
    if (this.#closed) throw new RuntimeServiceError('runtime_service_generation_stale');
    assertCallLive(checkCallOptions(options));
  }

  #scope(scope: MemoryScope): ScopeMemory {
    const key = scopeKey('memory', scope);
    let memory = this.#scopes.get(key);
    if (memory === undefined) {
      memory = { epoch: 0, entries: new Map() };
      this.#scopes.set(key, memory);
    }
    return memory;
  }

  /** Adds the entries not yet present, all or none: the quotas are checked for the whole batch first. */
  #store(memory: ScopeMemory, batch: MemoryEntryBatch): IngestionCount {
    const fresh = batch.entries.filter((entry) => !memory.entries.has(entry.eventId));
    const bytes = fresh.reduce((sum, entry) => sum + entry.contentBytes + entry.metadataBytes, 0);
    if (this.#entries + fresh.length > this.config.maxEntries) throw new RuntimeServiceError('memory_quota_exceeded', { limit: 'maxEntries' });
    if (this.#bytes + bytes > this.config.maxTotalBytes) throw new RuntimeServiceError('memory_quota_exceeded', { limit: 'maxTotalBytes' });
    for (const entry of fresh) {
      memory.entries.set(entry.eventId, {
        id: entry.entryId,
        content: entry.content,
        contentBytes: entry.contentBytes,
        author: entry.author,
        timestamp_ms: entry.timestampMs,
        tokens: wordTokens(entry.content),
        metadata: entry.metadata,
        bytes: entry.contentBytes + entry.metadataBytes,
      });
    }
    this.#entries += fresh.length;
    this.#bytes += bytes;
    return Object.freeze({ added: fresh.length, duplicates: batch.entries.length - fresh.length + batch.repeated });
  }
}
