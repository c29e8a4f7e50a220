import { types } from 'node:util';
import { canonicalJson } from '../../json/canonical-json';
import { hasEscapedNul } from '../../json/escaped-nul';
import { frozenJsonParse } from '../../json/json-copy';
import { exceededJsonShape } from '../../json/json-shape';
import type { JsonObject } from '../../json/json.types';
import { measure } from '../../json/measure';
import type { SessionEventKind } from '../../runner/session.types';
import { readOwnData } from '../../shared/options/option-reader';
import { isPlainObject, isSafeIntegerAtLeast } from '../../shared/options/plain-object';
import { sha256Hex } from '../../shared/text/sha256';
import { RuntimeServiceError } from '../runtime-service.errors';
import { isScopePart } from '../service-scope';
import type { MemoryScope } from '../services.types';
import type { MemoryAdapterConfig } from './memory-adapter-config';
import { invalidRequest, isStorableText } from './memory-requests';

/** The event kinds that become memory entries. */
export const MEMORY_EVENT_KINDS: readonly SessionEventKind[] = Object.freeze(['user_message', 'final_output']);

const EVENT_KINDS: readonly string[] = ['user_message', 'model_turn', 'tool_response', 'confirmation_requested', 'final_output', 'policy_audit'];
const EVENT_KEYS = ['event_id', 'invocation_id', 'session_id', 'seq', 'author', 'kind', 'content', 'actions', 'created_at_ms'] as const;

/** The text parts of an entry's content are joined with a line break, so words of adjacent parts stay apart. */
const PART_SEPARATOR = '\n';

/** An entry ready to be stored, built from one session event. */
export interface MemoryEntryDraft {
  /** `mem-` + 40 hex: SHA-256 of the canonical JSON of `[appName, userId, eventId]`, the same in every adapter. */
  readonly entryId: string;
  readonly eventId: string;
  readonly author: string;
  /** The event's text parts joined with `\n`. */
  readonly content: string;
  readonly contentBytes: number;
  /** `{session_id, invocation_id, kind, seq}` and the event's `actions` when it has them (deep-frozen). */
  readonly metadata: JsonObject;
  /** Canonical JSON of `metadata`. */
  readonly metadataJson: string;
  readonly metadataBytes: number;
  /** The event's `created_at_ms`. */
  readonly timestampMs: number;
}

/** The entries of one request (first occurrence of each `event_id`), and how many later occurrences it repeated. */
export interface MemoryEntryBatch {
  readonly entries: readonly MemoryEntryDraft[];
  readonly repeated: number;
}

/** The entry id of an event of a scope: `mem-` + the first 20 bytes (40 hex) of SHA-256 over canonical `[appName, userId, eventId]`. */
export function memoryEntryId(scope: MemoryScope, eventId: string): string {
  return `mem-${sha256Hex(canonicalJson([scope.appName, scope.userId, eventId])).slice(0, 40)}`;
}

/**
 * The entries that `events` (a genuine array of session events, at most `maxEventsPerRequest`) give
 * `scope`: each `user_message` or `final_output` event with a non-blank text part becomes one entry
 * keyed by its `event_id`; other events are checked and skipped. The whole request is checked before
 * anything is stored: `invalid_memory_request` (`{field, index?}`; `{field: 'events', limit}` for too
 * many), `memory_content_too_large` (`{index, limit}` naming the bound: `maxContentBytes`,
 * `maxMetadataBytes`, `maxMetadataDepth` or `maxMetadataNodes`). With `sessionId` every event must
 * belong to that session. No getter of the input is ever called.
 */
export function memoryEntriesOf(scope: MemoryScope, events: unknown, config: MemoryAdapterConfig, sessionId?: string): MemoryEntryBatch {
  if (!Array.isArray(events) || types.isProxy(events)) throw invalidRequest({ field: 'events' });
  if (events.length > config.maxEventsPerRequest) throw invalidRequest({ field: 'events', limit: 'maxEventsPerRequest' });
  const entries = new Map<string, MemoryEntryDraft>();
  let repeated = 0;
  for (let index = 0; index < events.length; index++) {
    const descriptor = Object.getOwnPropertyDescriptor(events, index);
    const entry = entryOf(scope, descriptor !== undefined && 'value' in descriptor ? descriptor.value : undefined, index, config, sessionId);
    if (entry === null) continue;
    if (entries.has(entry.eventId)) repeated += 1;
    else entries.set(entry.eventId, entry);
  }
  return Object.freeze({ entries: Object.freeze([...entries.values()]), repeated });
}

function entryOf(scope: MemoryScope, value: unknown, index: number, config: MemoryAdapterConfig, sessionId: string | undefined): MemoryEntryDraft | null {
  const own = readOwnData(value, EVENT_KEYS);
  if (own === null) throw invalidRequest({ field: 'event', index });
  if (own.accessors.length > 0) throw invalidRequest({ field: own.accessors[0], index });
  const event = own.values;
  const checks: ReadonlyArray<readonly [string, boolean]> = [
    ['event_id', isScopePart(event.event_id)],
    ['invocation_id', isScopePart(event.invocation_id)],
    ['session_id', isScopePart(event.session_id) && (sessionId === undefined || event.session_id === sessionId)],
    ['seq', isSafeIntegerAtLeast(event.seq, 1)],
    ['author', isScopePart(event.author)],
    ['kind', EVENT_KINDS.includes(event.kind as string)],
    ['content', event.content !== undefined],
    ['actions', event.actions === undefined || (isPlainObject(event.actions) && !types.isProxy(event.actions))],
    ['created_at_ms', isSafeIntegerAtLeast(event.created_at_ms, 0)],
  ];
  for (const [field, ok] of checks) if (!ok) throw invalidRequest({ field, index });
  if (!MEMORY_EVENT_KINDS.includes(event.kind as SessionEventKind)) return null;
  const content = contentText(event.content, index, config.maxContentBytes);
  if (content === null) return null;
  const eventId = event.event_id as string;
  const metadata = metadataOf(
    { session_id: event.session_id, invocation_id: event.invocation_id, kind: event.kind, seq: event.seq, ...(event.actions === undefined ? {} : { actions: event.actions }) },
    index,
    config,
  );
  return Object.freeze({
    entryId: memoryEntryId(scope, eventId),
    eventId,
    author: event.author as string,
    content: content.text,
    contentBytes: content.bytes,
    ...metadata,
    timestampMs: event.created_at_ms as number,
  });
}

/** The joined text parts of a Content `{role, parts}`, or `null` when no part has a non-blank text. */
function contentText(value: unknown, index: number, maxContentBytes: number): { readonly text: string; readonly bytes: number } | null {
  const content = readOwnData(value, ['role', 'parts']);
  const parts = content?.values.parts;
  const role = content?.values.role;
  if (content === null || content.accessors.length > 0 || (role !== 'user' && role !== 'model') || !Array.isArray(parts) || types.isProxy(parts)) {
    throw invalidRequest({ field: 'content', index });
  }
  const texts: string[] = [];
  let bytes = 0;
  let blank = true;
  for (let i = 0; i < parts.length; i++) {
    const descriptor = Object.getOwnPropertyDescriptor(parts, i);
    const part = readOwnData(descriptor !== undefined && 'value' in descriptor ? descriptor.value : undefined, ['text', 'data']);
    const hasText = part?.values.text !== undefined;
    if (part === null || part.accessors.length > 0 || hasText === (part.values.data !== undefined)) throw invalidRequest({ field: 'content', index });
    if (!hasText) continue;
    const text = part.values.text;
    if (!isStorableText(text)) throw invalidRequest({ field: 'content', index });
    const separator = texts.length > 0 ? PART_SEPARATOR.length : 0;
    // the length is a lower bound of the UTF-8 bytes: a huge text is refused before it is scanned
    if (bytes + separator + text.length > maxContentBytes) throw tooLarge(index, 'maxContentBytes');
    bytes += separator + Buffer.byteLength(text, 'utf8');
    if (bytes > maxContentBytes) throw tooLarge(index, 'maxContentBytes');
    texts.push(text);
    if (blank && /\S/u.test(text)) blank = false;
  }
  return blank ? null : Object.freeze({ text: texts.join(PART_SEPARATOR), bytes });
}

function metadataOf(candidate: Record<string, unknown>, index: number, config: MemoryAdapterConfig): Pick<MemoryEntryDraft, 'metadata' | 'metadataJson' | 'metadataBytes'> {
  let measured;
  try {
    measured = measure(candidate, config.maxMetadataBytes);
  } catch {
    throw invalidRequest({ field: 'actions', index });
  }
  if (measured.exceeded) throw tooLarge(index, 'maxMetadataBytes');
  const shape = exceededJsonShape(candidate, { maxDepth: config.maxMetadataDepth, maxNodes: config.maxMetadataNodes });
  if (shape !== null) throw tooLarge(index, shape === 'depth' ? 'maxMetadataDepth' : 'maxMetadataNodes');
  const metadataJson = canonicalJson(candidate);
  if (hasEscapedNul(metadataJson)) throw invalidRequest({ field: 'actions', index });
  return { metadata: frozenJsonParse(metadataJson) as JsonObject, metadataJson, metadataBytes: measured.bytes };
}

function tooLarge(index: number, limit: string): RuntimeServiceError {
  return new RuntimeServiceError('memory_content_too_large', { index, limit });
}
