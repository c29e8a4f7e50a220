import { LinkedList, type ListNode } from '../../shared/collections/linked-list';
import { CursorIndex } from './cursor-index';
import type { ReceiverEntry } from '../receiver/trace-receiver-registry';
import { ALL_STREAM_KEY } from './trace-stream-keys';
import type { TraceRecord } from '../trace.types';

/** A principal, known only by its digest. */
export interface PrincipalState {
  readonly digest: string;
  readonly streams: Map<string, Stream>;
  events: number;
  bytes: number;
  receiver: ReceiverEntry | null;
}

/** One record and where it is indexed. */
export interface StoredRecord {
  readonly record: TraceRecord;
  readonly size: number;
  /** Monotonic ms at which retention removes it. */
  readonly expiresAt: number;
  readonly principal: PrincipalState;
  readonly streams: readonly Stream[];
}

/** The records of one identity subset of one principal; a tombstone once empty. */
export interface Stream extends ListNode<Stream> {
  readonly key: string;
  readonly principal: PrincipalState;
  readonly index: CursorIndex<StoredRecord>;
  latestCursor: number;
  evictedThrough: number;
  /** Monotonic ms at which the tombstone goes; `Infinity` while the stream holds records. */
  tombstoneExpiresAt: number;
}

/**
 * The records, streams and principals of a trace store. Records leave only through `remove`, at the
 * oldest end of each of their streams; streams emptied become tombstones, kept in expiry order (the
 * order they emptied in, the clock being monotonic) for `retentionMs`.
 */
export class TraceState {
  readonly principals = new Map<string, PrincipalState>();
  /** Every record in cursor order: the global eviction and retention order. */
  readonly records = new CursorIndex<StoredRecord>();
  readonly tombstones = new LinkedList<Stream>();
  events = 0;
  bytes = 0;
  streams = 0;
  lastCursor = 0;

  constructor(
    private readonly retentionMs: number,
    private readonly maxStreams: number,
  ) {}

  /** The principal's state, created (not yet holding anything) when absent. */
  principal(digest: string): PrincipalState {
    let state = this.principals.get(digest);
    if (state === undefined) {
      state = { digest, streams: new Map(), events: 0, bytes: 0, receiver: null };
      this.principals.set(digest, state);
    }
    return state;
  }

  /** Forgets a principal that holds no record, stream or receiver. */
  forgetIfIdle(principal: PrincipalState): void {
    if (principal.streams.size === 0 && principal.receiver === null) this.principals.delete(principal.digest);
  }

  /** The principal's oldest record. */
  oldestOf(principal: PrincipalState): StoredRecord | undefined {
    return principal.streams.get(ALL_STREAM_KEY)?.index.oldest();
  }

  /**
   * Commits `record` (its cursor being `lastCursor + 1`) into the streams named by `keys`; returns
   * how many tombstones had to go to keep within `maxStreams`.
   */
  insert(principal: PrincipalState, record: TraceRecord, size: number, expiresAt: number, keys: readonly string[]): number {
    const streams: Stream[] = [];
    const missing: string[] = [];
    for (const key of keys) {
      const stream = principal.streams.get(key);
      if (stream === undefined) missing.push(key);
      else {
        if (stream.tombstoneExpiresAt !== Infinity) this.revive(stream);
        streams.push(stream);
      }
    }
    // revived first, so none of the record's own streams can go
    let dropped = 0;
    for (; this.streams + missing.length > this.maxStreams && this.tombstones.head !== null; dropped++) this.dropTombstone(this.tombstones.head);
    // dropping the principal's other tombstones may have forgotten it
    this.principals.set(principal.digest, principal);
    for (const key of missing) streams.push(this.createStream(principal, key));
    const stored: StoredRecord = { record, size, expiresAt, principal, streams };
    this.lastCursor = record.cursor;
    this.records.push(record.cursor, stored);
    for (const stream of streams) {
      stream.index.push(record.cursor, stored);
      stream.latestCursor = record.cursor;
    }
    principal.events++;
    principal.bytes += size;
    this.events++;
    this.bytes += size;
    return dropped;
  }

  /** Removes a record (eviction or retention); its emptied streams become tombstones. */
  remove(stored: StoredRecord, now: number): void {
    const cursor = stored.record.cursor;
    this.records.delete(cursor);
    for (const stream of stored.streams) {
      stream.index.delete(cursor);
      if (cursor > stream.evictedThrough) stream.evictedThrough = cursor;
      if (stream.index.size === 0) {
        stream.tombstoneExpiresAt = now + this.retentionMs;
        this.tombstones.push(stream);
      }
    }
    stored.principal.events--;
    stored.principal.bytes -= stored.size;
    this.events--;
    this.bytes -= stored.size;
  }

  /** Removes up to `batch` expired records, oldest first; returns how many. */
  expireRecords(now: number, batch: number): number {
    let removed = 0;
    for (let oldest = this.records.oldest(); oldest !== undefined && oldest.expiresAt <= now && removed < batch; oldest = this.records.oldest()) {
      this.remove(oldest, now);
      removed++;
    }
    return removed;
  }

  /** Drops up to `batch` expired tombstones, first expiring first; returns how many. */
  expireTombstones(now: number, batch: number): number {
    let dropped = 0;
    for (let head = this.tombstones.head; head !== null && head.tombstoneExpiresAt <= now && dropped < batch; head = this.tombstones.head) {
      this.dropTombstone(head);
      dropped++;
    }
    return dropped;
  }

  /** True while an expired record or tombstone waits for a pass. */
  hasExpired(now: number): boolean {
    const oldest = this.records.oldest();
    const tombstone = this.tombstones.head;
    return (oldest !== undefined && oldest.expiresAt <= now) || (tombstone !== null && tombstone.tombstoneExpiresAt <= now);
  }

  /** Removes a tombstone for good, and its principal when that held nothing else. */
  dropTombstone(stream: Stream): void {
    this.tombstones.remove(stream);
    stream.principal.streams.delete(stream.key);
    this.streams--;
    this.forgetIfIdle(stream.principal);
  }

  private revive(stream: Stream): void {
    this.tombstones.remove(stream);
    stream.tombstoneExpiresAt = Infinity;
  }

  private createStream(principal: PrincipalState, key: string): Stream {
    const stream: Stream = {
      key,
      principal,
      index: new CursorIndex(),
      latestCursor: 0,
      evictedThrough: 0,
      tombstoneExpiresAt: Infinity,
      prev: null,
      next: null,
    };
    principal.streams.set(key, stream);
    this.streams++;
    return stream;
  }
}
