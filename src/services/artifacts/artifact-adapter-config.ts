import { readAdapterConfig } from '../config-reader';

const KIB = 1024;
const MIB = 1024 * KIB;
const GIB = 1024 * MIB;

/** The artifact adapters the bundle builds: `in_memory` (ephemeral), `postgres` (durable), `filesystem` (durable with `artifactRoot`). */
export type ArtifactAdapterKind = 'in_memory' | 'postgres' | 'filesystem';

/** The keys every artifact adapter reads (spec 07 §2). */
export interface ArtifactPagingConfig {
  /** Largest `data` of one version, bytes; larger → `artifact_too_large`. */
  readonly maxArtifactBytes: number;
  /** Largest `limit` of a listing page. @default 1000 */
  readonly maxPageLimit: number;
  /** Most entries an unpaged listing returns; more → `artifact_list_limit_exceeded`. @default 1000 */
  readonly legacyListLimit: number;
}

/**
 * The in-memory adapter's `adapterConfig`. Its quotas are charged per stored version with the data,
 * the canonical metadata, the mime type and the filename bytes; the scope quotas bound each scope,
 * the total quotas the one shared adapter.
 */
export interface InMemoryArtifactConfig extends ArtifactPagingConfig {
  /** @default 67108864 (64 MiB) */
  readonly maxArtifactBytes: number;
  /** Most bytes of one scope. @default 268435456 (256 MiB) */
  readonly maxScopeBytes: number;
  /** Most bytes of every scope together. @default 536870912 (512 MiB) */
  readonly maxTotalBytes: number;
  /** Most stored versions of one scope. @default 25000 */
  readonly maxScopeArtifacts: number;
  /** Most stored versions of every scope together. @default 100000 */
  readonly maxTotalArtifacts: number;
}

/** The Postgres adapter's `adapterConfig`. */
export interface PostgresArtifactConfig extends ArtifactPagingConfig {
  /** bytea travels through `pg` as hex text, two characters per byte. @default 8388608 (8 MiB) */
  readonly maxArtifactBytes: number;
}

/** The filesystem adapter's `adapterConfig`. */
export interface FilesystemArtifactConfig extends ArtifactPagingConfig {
  /** @default 67108864 (64 MiB) */
  readonly maxArtifactBytes: number;
  /** Most directory entries one operation reads; more → `artifact_scan_limit_exceeded`. @default 10000 */
  readonly maxScanEntries: number;
  /** Age after which a temporary file of a scope is removed when its worker starts, ms. @default 300000 */
  readonly recoveryGraceMs: number;
}

/** The resolved configuration of each adapter. */
export interface ArtifactAdapterConfigs {
  readonly in_memory: InMemoryArtifactConfig;
  readonly postgres: PostgresArtifactConfig;
  readonly filesystem: FilesystemArtifactConfig;
}

/**
 * One key: its default, its own inclusive range, and the keys it must not fall below or exceed
 * (the spec's "≤ scope bytes ≤ total bytes", "≥ page limit" rules).
 */
interface OptionRule {
  readonly default: number;
  readonly range: readonly number[];
  readonly atLeast?: readonly string[];
  readonly atMost?: readonly string[];
}

const paging = (maxScanEntries: boolean): Record<'maxPageLimit' | 'legacyListLimit', OptionRule> => ({
  maxPageLimit: { default: 1000, range: [1, 10_000], atMost: maxScanEntries ? ['maxScanEntries'] : [] },
  legacyListLimit: { default: 1000, range: [1, 100_000], atMost: maxScanEntries ? ['maxScanEntries'] : [] },
});

/**
 * Every key of every adapter. The maxima are this package's: 1 GiB for one artifact held in a
 * Buffer, 128 MiB for bytea (its hex text must stay below V8's largest string), 16 GiB and
 * 10,000,000 versions for the in-memory quotas (as the memory adapter's), 10,000 per page, 100,000
 * unpaged, 1,000,000 scanned entries and a 7-day grace.
 */
export const ARTIFACT_ADAPTER_OPTION_RULES: Readonly<Record<ArtifactAdapterKind, Readonly<Record<string, OptionRule>>>> = Object.freeze({
  in_memory: Object.freeze({
    maxArtifactBytes: { default: 64 * MIB, range: [1, GIB], atMost: ['maxScopeBytes'] },
    maxScopeBytes: { default: 256 * MIB, range: [1, 16 * GIB], atLeast: ['maxArtifactBytes'], atMost: ['maxTotalBytes'] },
    maxTotalBytes: { default: 512 * MIB, range: [1, 16 * GIB], atLeast: ['maxScopeBytes'] },
    maxScopeArtifacts: { default: 25_000, range: [1, 10_000_000], atMost: ['maxTotalArtifacts'] },
    maxTotalArtifacts: { default: 100_000, range: [1, 10_000_000], atLeast: ['maxScopeArtifacts'] },
    ...paging(false),
  }),
  postgres: Object.freeze({
    maxArtifactBytes: { default: 8 * MIB, range: [1, 128 * MIB] },
    ...paging(false),
  }),
  filesystem: Object.freeze({
    maxArtifactBytes: { default: 64 * MIB, range: [1, GIB] },
    ...paging(true),
    maxScanEntries: { default: 10_000, range: [3, 1_000_000], atLeast: ['maxPageLimit', 'legacyListLimit'] },
    recoveryGraceMs: { default: 300_000, range: [0, 7 * 24 * 60 * 60 * 1000] },
  }),
});

/**
 * The `adapterConfig` of an artifact adapter with its defaults applied (frozen). Own data properties
 * only, no getter called; `undefined` means the default. Refusals are
 * `invalid_runtime_service_component_config` with `{kind: 'artifact', reason}`: unknown keys (the
 * quota keys are unknown to `postgres` and `filesystem`) → `adapter_unknown_keys` + `field`/sorted
 * `fields`; a value that is not an integer of its range, or that breaks a rule between keys, →
 * `adapter_config` + `field` + `value_range: [min, max]`, the range allowed given the other keys; a
 * value that is not a plain object → `expected_object` + `field: 'adapterConfig'`. Keys are checked in
 * sorted order, and only keys that were given are blamed (the defaults agree with one another).
 *
 * @example
 * resolveArtifactAdapterConfig('postgres', { maxPageLimit: 50 }).maxPageLimit; // 50
 * resolveArtifactAdapterConfig('in_memory', { maxScopeBytes: 1024 }); // throws, value_range [67108864, 536870912]
 */
export function resolveArtifactAdapterConfig<K extends ArtifactAdapterKind>(adapter: K, raw: unknown): ArtifactAdapterConfigs[K] {
  const rules = ARTIFACT_ADAPTER_OPTION_RULES[adapter];
  if (rules === undefined) throw new TypeError('adapter must be in_memory, postgres or filesystem');
  const ranges = Object.fromEntries(Object.entries(rules).map(([key, rule]) => [key, rule.range])) as Record<string, readonly [number, number]>;
  const { given, outOfRange } = readAdapterConfig('artifact', raw, ranges);
  const resolved: Record<string, number> = {};
  for (const [key, rule] of Object.entries(rules)) resolved[key] = given[key] ?? rule.default;
  for (const key of Object.keys(given).sort()) {
    const rule = rules[key];
    const low = Math.max(rule.range[0], ...(rule.atLeast ?? []).map((other) => resolved[other]));
    const high = Math.min(rule.range[1], ...(rule.atMost ?? []).map((other) => resolved[other]));
    if (resolved[key] < low || resolved[key] > high) throw outOfRange(key, [low, high]);
  }
  return Object.freeze(resolved) as unknown as ArtifactAdapterConfigs[K];
}
