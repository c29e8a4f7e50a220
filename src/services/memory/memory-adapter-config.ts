import { readAdapterConfig } from '../config-reader';

const KIB = 1024;
const MIB = 1024 * KIB;
const GIB = 1024 * MIB;

/** The memory adapters the bundle builds: `in_memory` (ephemeral profile) and `postgres` (durable). */
export type MemoryAdapterKind = 'in_memory' | 'postgres';

/** The `adapterConfig` of the memory component that both adapters read (spec 07 §1.3). */
export interface MemoryAdapterConfig {
  /** Largest content of one entry (its joined text parts), UTF-8 bytes. @default 65536 */
  readonly maxContentBytes: number;
  /** Largest metadata of one entry, canonical JSON bytes. @default 16384 */
  readonly maxMetadataBytes: number;
  /** Deepest nesting of an entry's metadata (`{}` is 1). @default 16 */
  readonly maxMetadataDepth: number;
  /** Most values in an entry's metadata, the metadata object itself included. @default 1000 */
  readonly maxMetadataNodes: number;
  /** Largest search query, UTF-8 bytes. @default 4096 */
  readonly maxQueryBytes: number;
  /** Most hits of one search. @default 20 */
  readonly maxResults: number;
  /** Most content bytes of one search's hits together. @default 1048576 */
  readonly maxResultBytes: number;
  /** Most events in one `addEvents` or `addSessionToMemory` request. @default 1000 */
  readonly maxEventsPerRequest: number;
}

/** The `adapterConfig` of the in-memory adapter: the shared keys and its global quotas. */
export interface InMemoryMemoryAdapterConfig extends MemoryAdapterConfig {
  /** Most entries held, over every scope. @default 100000 */
  readonly maxEntries: number;
  /** Most bytes held (content + canonical metadata of every entry), over every scope. @default 268435456 */
  readonly maxTotalBytes: number;
}

type SharedKey = keyof MemoryAdapterConfig;
type QuotaKey = Exclude<keyof InMemoryMemoryAdapterConfig, SharedKey>;

/** Defaults of every key (spec 07 §1.3). */
export const MEMORY_ADAPTER_CONFIG_DEFAULTS: Readonly<InMemoryMemoryAdapterConfig> = Object.freeze({
  maxContentBytes: 64 * KIB,
  maxMetadataBytes: 16 * KIB,
  maxMetadataDepth: 16,
  maxMetadataNodes: 1000,
  maxQueryBytes: 4 * KIB,
  maxResults: 20,
  maxResultBytes: MIB,
  maxEventsPerRequest: 1000,
  maxEntries: 100_000,
  maxTotalBytes: 256 * MIB,
});

const SHARED_RANGES: Readonly<Record<SharedKey, readonly [number, number]>> = Object.freeze({
  maxContentBytes: [1, MIB],
  maxMetadataBytes: [1, MIB],
  maxMetadataDepth: [1, 64],
  maxMetadataNodes: [1, 50_000],
  maxQueryBytes: [1, 64 * KIB],
  maxResults: [1, 1000],
  maxResultBytes: [1, 16 * MIB],
  maxEventsPerRequest: [1, 10_000],
});

const QUOTA_RANGES: Readonly<Record<QuotaKey, readonly [number, number]>> = Object.freeze({
  maxEntries: [1, 10_000_000],
  maxTotalBytes: [1, 16 * GIB],
});

/** The inclusive integer range of every key; `maxEntries` and `maxTotalBytes` belong to the in-memory adapter only. */
export const MEMORY_ADAPTER_CONFIG_RANGES: Readonly<Record<keyof InMemoryMemoryAdapterConfig, readonly [number, number]>> = Object.freeze({
  ...SHARED_RANGES,
  ...QUOTA_RANGES,
});

/**
 * The `adapterConfig` of a memory adapter with its defaults applied (frozen). Own data properties
 * only, no getter called; `undefined` means the default. Unknown keys (the quota keys are unknown
 * to `postgres`) → `invalid_runtime_service_component_config` `{kind: 'memory', reason:
 * 'adapter_unknown_keys'}` + `field`/sorted `fields`; a value that is not an integer of its range →
 * `{kind: 'memory', reason: 'adapter_config', field, value_range: [min, max]}` (the first such key,
 * sorted); a value that is not a plain object → `{kind: 'memory', reason: 'expected_object', field:
 * 'adapterConfig'}`.
 *
 * @example
 * resolveMemoryAdapterConfig('postgres', { maxResults: 50 }).maxResults; // 50
 * resolveMemoryAdapterConfig('in_memory', { maxContentBytes: 0 }); // throws, value_range [1, 1048576]
 */
export function resolveMemoryAdapterConfig(adapter: 'in_memory', raw: unknown): InMemoryMemoryAdapterConfig;
export function resolveMemoryAdapterConfig(adapter: 'postgres', raw: unknown): MemoryAdapterConfig;
export function resolveMemoryAdapterConfig(adapter: MemoryAdapterKind, raw: unknown): MemoryAdapterConfig | InMemoryMemoryAdapterConfig;
export function resolveMemoryAdapterConfig(adapter: MemoryAdapterKind, raw: unknown): MemoryAdapterConfig | InMemoryMemoryAdapterConfig {
  const ranges: Readonly<Record<string, readonly [number, number]>> = adapter === 'in_memory' ? MEMORY_ADAPTER_CONFIG_RANGES : SHARED_RANGES;
  const { given } = readAdapterConfig('memory', raw, ranges);
  const resolved: Record<string, number> = {};
  for (const key of Object.keys(ranges)) resolved[key] = given[key] ?? MEMORY_ADAPTER_CONFIG_DEFAULTS[key as keyof InMemoryMemoryAdapterConfig];
  return Object.freeze(resolved) as unknown as MemoryAdapterConfig | InMemoryMemoryAdapterConfig;
}
