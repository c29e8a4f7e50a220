import type { AdapterCallOptions, IngestionCount, MemoryHit, MemoryScope, MemoryService, ServiceAdapter } from '../services.types';

/**
 * A memory adapter as the scope router runs it: the {@link MemoryService} operations, each taking
 * the call's remaining time and signal last (optional when the adapter is used directly), plus the
 * adapter's id, capabilities and close.
 */
export interface MemoryAdapter extends ServiceAdapter {
  addSessionToMemory(input: Parameters<MemoryService['addSessionToMemory']>[0], options?: AdapterCallOptions): Promise<IngestionCount>;
  addEvents(scope: MemoryScope, events: Parameters<MemoryService['addEvents']>[1], ingestion: Parameters<MemoryService['addEvents']>[2], options?: AdapterCallOptions): Promise<IngestionCount>;
  searchMemory(request: Parameters<MemoryService['searchMemory']>[0], options?: AdapterCallOptions): Promise<{ readonly memories: readonly MemoryHit[] }>;
  eraseMemory(scope: MemoryScope, options?: AdapterCallOptions): Promise<{ readonly epoch: number }>;
}
