import { decodeKeysetCursor, encodeKeysetCursor } from '../../json/keyset-cursor';
import { readOptions } from '../../shared/options/option-reader';
import { isSafeIntegerAtLeast } from '../../shared/options/plain-object';
import { RuntimeServiceError } from '../runtime-service.errors';
import type { ArtifactPagingConfig } from './artifact-adapter-config';
import { invalidArtifact, isArtifactFilename } from './artifact-request';

/**
 * Longest cursor accepted, in characters: a 1024-byte filename of control characters, each escaped
 * as six characters of JSON, in base64url.
 */
export const MAX_ARTIFACT_CURSOR_CHARS = 8256;

/** What a listing reads: at most `limit` entries after `after` (exclusive); `paged` false is the unpaged (legacy) call. */
export interface Listing<T> {
  readonly paged: boolean;
  /** Entries to return: the page limit, or `legacyListLimit` when unpaged. */
  readonly limit: number;
  readonly after: T | null;
}

/** A page: at most `limit` items, the cursor after the last one when more follow. */
export interface Page<T> {
  readonly items: readonly T[];
  readonly next_cursor: string | null;
  readonly has_more: boolean;
}

const KEYS = 'artifact_keys';
const VERSIONS = 'artifact_versions';

/** The listing of `listArtifactKeys`: the cursor holds the last filename returned. */
export function keyListing(page: unknown, config: ArtifactPagingConfig): Listing<string> {
  return listing(page, config, (parts) => (parts.length === 2 && parts[0] === KEYS && isArtifactFilename(parts[1]) ? parts[1] : null));
}

/** The listing of `listVersions`: the cursor holds the last version returned. */
export function versionListing(page: unknown, config: ArtifactPagingConfig): Listing<number> {
  return listing(page, config, (parts) => (parts.length === 2 && parts[0] === VERSIONS && isSafeIntegerAtLeast(parts[1], 1) ? parts[1] : null));
}

/**
 * The page of `candidates`: the entries after `listing.after` in order, of which at least
 * `listing.limit + 1` must be given when that many exist (one more than the page, to know whether
 * more follow). Unpaged, more than `legacyListLimit` entries → `artifact_list_limit_exceeded`.
 */
export function pageOf<T>(candidates: readonly T[], listing: Listing<unknown>, cursorKey: (item: T) => string | number, kind: 'keys' | 'versions'): Page<T> {
  if (candidates.length <= listing.limit) return Object.freeze({ items: Object.freeze([...candidates]), next_cursor: null, has_more: false });
  if (!listing.paged) throw new RuntimeServiceError('artifact_list_limit_exceeded', { limit: 'legacyListLimit' });
  const items = Object.freeze(candidates.slice(0, listing.limit));
  const last = cursorKey(items[items.length - 1]);
  return Object.freeze({ items, next_cursor: encodeKeysetCursor([kind === 'keys' ? KEYS : VERSIONS, last]), has_more: true });
}

function listing<T>(page: unknown, config: ArtifactPagingConfig, readCursor: (parts: readonly unknown[]) => T | null): Listing<T> {
  const read = readOptions(
    page,
    { limit: (value) => isSafeIntegerAtLeast(value, 1) && value <= config.maxPageLimit, cursor: (value) => typeof value === 'string' },
    { name: 'page', unknownKeys: 'refuse' },
  );
  if (!read.ok) throw invalidArtifact(read.fields);
  const { limit, cursor } = read.values as { limit?: number; cursor?: string };
  if (limit === undefined && cursor === undefined) return { paged: false, limit: config.legacyListLimit, after: null };
  let after: T | null = null;
  if (cursor !== undefined) {
    const parts = decodeKeysetCursor(cursor, MAX_ARTIFACT_CURSOR_CHARS);
    after = parts === null ? null : readCursor(parts);
    if (after === null) throw invalidArtifact(['cursor']);
  }
  return { paged: true, limit: limit ?? config.maxPageLimit, after };
}
