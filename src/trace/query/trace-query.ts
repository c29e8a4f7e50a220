import { readOptions, readOwnData } from '../../shared/options/option-reader';
import { integerIn } from '../../shared/options/option-rules';
import type { ResolvedTraceStoreOptions } from '../trace-store-options';
import { TraceStoreError } from '../trace-store.errors';
import type { TraceGapDetails, TracePage } from '../trace-store.types';
import type { Stream } from '../state/trace-state';
import { ALL_STREAM_KEY, IDENTITY_KEYS, streamKey } from '../state/trace-stream-keys';
import type { TraceIdentityKey, TraceRecord } from '../trace.types';

/** Longest identity value, in UTF-8 bytes. */
const MAX_IDENTITY_BYTES = 512;

/** Validated query options. */
export interface ParsedQuery {
  /** `undefined`: not given, so no gap is reported. */
  readonly afterCursor: number | undefined;
  readonly limit: number;
  readonly maxBytes: number;
}

const invalidSelector = (field: string): TraceStoreError => new TraceStoreError('invalid_trace_selector', { field });

function isIdentityValue(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.isWellFormed() && Buffer.byteLength(value, 'utf8') <= MAX_IDENTITY_BYTES;
}

/**
 * The stream key a selector names (spec 06 §5): `'all'`, or 1..4 identity members with string
 * values of 1..512 bytes. Throws `invalid_trace_selector` with `{field}`: `'selector'` for the
 * shape (not `'all'` nor a plain object, empty, an unknown key), else the identity key at fault.
 * Never echoes a value or an unknown key.
 */
export function selectorStreamKey(selector: unknown): string {
  if (selector === 'all') return ALL_STREAM_KEY;
  const own = readOwnData(selector, IDENTITY_KEYS);
  if (own === null || own.unknown.length > 0) throw invalidSelector('selector');
  const members: { [K in TraceIdentityKey]?: string } = {};
  let entries = 0;
  for (const key of IDENTITY_KEYS) {
    if (own.accessors.includes(key)) throw invalidSelector(key);
    if (!(key in own.values)) continue;
    const value = own.values[key];
    if (!isIdentityValue(value)) throw invalidSelector(key);
    members[key] = value;
    entries++;
  }
  if (entries === 0) throw invalidSelector('selector');
  return streamKey(members);
}

/**
 * Validates query options against the store's bounds; `invalid_trace_query_options` with
 * `{field}` (the first failing key, sorted) for a bad value or an unknown key, and
 * `invalid_trace_store_request` when `options` is not a plain object at all.
 */
export function parseQueryOptions(options: unknown, bounds: ResolvedTraceStoreOptions): ParsedQuery {
  if (options !== undefined && readOwnData(options, []) === null) throw new TraceStoreError('invalid_trace_store_request', {});
  const read = readOptions(
    options,
    {
      afterCursor: integerIn(0),
      limit: integerIn(1, bounds.maxQueryEvents),
      maxBytes: integerIn(bounds.maxEventBytes, bounds.maxQueryBytes),
    },
    { name: 'options', unknownKeys: 'refuse' },
  );
  if (!read.ok) throw new TraceStoreError('invalid_trace_query_options', { field: read.fields[0] });
  return {
    afterCursor: read.values.afterCursor as number | undefined,
    limit: (read.values.limit as number | undefined) ?? bounds.maxQueryEvents,
    maxBytes: (read.values.maxBytes as number | undefined) ?? bounds.maxQueryBytes,
  };
}

/**
 * One page of `stream` (`undefined`: a stream the principal never had). O(log n + page): a binary
 * search to the first record after the cursor, then the page itself. An explicit `afterCursor`
 * below `evicted_through` is `replay_gap`, above `latest_cursor` is `cursor_ahead`.
 */
export function readPage(stream: Stream | undefined, query: ParsedQuery): TracePage {
  const latest = stream?.latestCursor ?? 0;
  const evictedThrough = stream?.evictedThrough ?? 0;
  const oldest = stream?.index.oldestCursor ?? null;
  const after = query.afterCursor;
  if (after !== undefined && (after < evictedThrough || after > latest)) {
    const details: TraceGapDetails = { after_cursor: after, oldest_available_cursor: oldest, latest_cursor: latest, evicted_through: evictedThrough };
    throw new TraceStoreError(after < evictedThrough ? 'replay_gap' : 'cursor_ahead', details);
  }
  const events: TraceRecord[] = [];
  let bytes = 0;
  let truncated = false;
  if (stream !== undefined) {
    for (const stored of stream.index.after(after)) {
      if (events.length === query.limit || bytes + stored.size > query.maxBytes) {
        truncated = true;
        break;
      }
      events.push(stored.record);
      bytes += stored.size;
    }
  }
  return Object.freeze({
    events: Object.freeze(events),
    next_cursor: events.length > 0 ? events[events.length - 1].cursor : (after ?? latest),
    oldest_available_cursor: oldest,
    latest_cursor: latest,
    encoded_bytes: bytes,
    truncated,
  });
}
