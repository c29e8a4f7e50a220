import { types } from 'node:util';
import { canonicalJson } from '../../json/canonical-json';
import { hasEscapedNul } from '../../json/escaped-nul';
import { frozenJsonParse } from '../../json/json-copy';
import { exceededJsonShape } from '../../json/json-shape';
import type { JsonObject } from '../../json/json.types';
import { measure } from '../../json/measure';
import type { SessionEventKind } from '../../runner/session.types';
import { optionFailureDetails, readOptions, type OptionRules } from '../../shared/options/option-reader';
import { oneOf } from '../../shared/options/option-rules';
import { isPlainObject, isSafeIntegerAtLeast } from '../../shared/options/plain-object';
import { sha256Hex } from '../../shared/text/sha256';
import { RuntimeServiceError } from '../runtime-service.errors';
import { isScopePart } from '../service-scope';
import type { MemoryScope } from '../services.types';
import type { MemoryAdapterConfig } from './memory-adapter-config';
import { invalidRequest, isStorableText } from './memory-requests';
import { anyValue } from '../config-reader';

/** The event kinds that become memory entries. */
export const MEMORY_EVENT_KINDS: readonly SessionEventKind[] = Object.freeze(['user_message', 'final_output']);

const EVENT_KINDS: readonly string[] = ['user_message', 'model_turn', 'tool_response', 'confirmation_requested', 'final_output', 'policy_audit'];
type EventKey = 'event_id' | 'invocation_id' | 'session_id' | 'seq' | 'author' | 'kind' | 'content' | 'actions' | 'created_at_ms';
const isJsonContainer = (value: unknown): boolean => isPlainObject(value) && !types.isProxy(value);
/** Every key but `actions` is required; the content is checked on its own, as the entry's text. */
const REQUIRED_EVENT_KEYS: readonly EventKey[] = ['event_id', 'invocation_id', 'session_id', 'seq', 'author', 'kind', 'content', 'created_at_ms'];
const CONTENT_RULES = { role: oneOf('user', 'model'), parts: (value: unknown) => Array.isArray(value) && !types.isProxy(value) };
const PART_RULES = { text: isStorableText, data: anyValue };

/** The rules of a session event; with `sessionId`, the event must belong to that session. */
function eventRules(sessionId: string | undefined): OptionRules<EventKey> {
  return {
    event_id: isScopePart,
    invocation_id: isScopePart,
    session_id: (value) => isScopePart(value) && (sessionId === undefined || value === sessionId),
    seq: (value) => isSafeIntegerAtLeast(value, 1),
    author: isScopePart,
    kind: (value) => EVENT_KINDS.includes(value as string),
    content: anyValue,
    actions: isJsonContainer,
    created_at_ms: (value) => isSafeIntegerAtLeast(value, 0),
  };
}

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
 * anything is stored: `invalid_memory_request` (`{field, index?}` or sorted `{fields, index?}`: an
 * event's malformed keys, else its missing ones; `{field: 'events', limit}` for too many),
 * `memory_content_too_large` (`{index, limit}` naming the bound: `maxContentBytes`,
 * `maxMetadataBytes`, `maxMetadataDepth` or `maxMetadataNodes`). With `sessionId` every event must
 * belong to that session. No getter of the input is ever called.
 */
export function memoryEntriesOf(scope: MemoryScope, events: unknown, config: MemoryAdapterConfig, sessionId?: string): MemoryEntryBatch {
  if (!Array.isArray(events) || types.isProxy(events)) throw invalidRequest({ field: 'events' });
  if (events.length > config.maxEventsPerRequest) throw invalidRequest({ field: 'events', limit: 'maxEventsPerRequest' });
  const entries = new Map<string, MemoryEntryDraft>();
  const rules = eventRules(sessionId);
  let repeated = 0;
  for (let index = 0; index < events.length; index++) {
    const descriptor = Object.getOwnPropertyDescriptor(events, index);
    const entry = entryOf(scope, descriptor !== undefined && 'value' in descriptor ? descriptor.value : undefined, index, config, rules);
    if (entry === null) continue;
    if (entries.has(entry.eventId)) repeated += 1;
    else entries.set(entry.eventId, entry);
  }
  return Object.freeze({ entries: Object.freeze([...entries.values()]), repeated });
}

function entryOf(scope: MemoryScope, value: unknown, index: number, config: MemoryAdapterConfig, rules: OptionRules<EventKey>): MemoryEntryDraft | null {
  const read = readOptions(value ?? null, rules, { name: 'event', unknownKeys: 'ignore' });
  if (!read.ok) throw invalidRequest({ ...optionFailureDetails(read.fields), index });
  const event = read.values;
  const missing = REQUIRED_EVENT_KEYS.filter((key) => event[key] === undefined);
  if (missing.length > 0) throw invalidRequest({ ...optionFailureDetails(missing), index });
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
  const content = readOptions(value ?? null, CONTENT_RULES, { name: 'content', unknownKeys: 'ignore' });
  const parts = content.ok ? (content.values.parts as unknown[] | undefined) : undefined;
  if (!content.ok || content.values.role === undefined || parts === undefined) throw invalidRequest({ field: 'content', index });
  const texts: string[] = [];
  let bytes = 0;
  let blank = true;
  for (let i = 0; i < parts.length; i++) {
    const descriptor = Object.getOwnPropertyDescriptor(parts, i);
    const part = readOptions(descriptor !== undefined && 'value' in descriptor ? (descriptor.value ?? null) : null, PART_RULES, { name: 'part', unknownKeys: 'ignore' });
    if (!part.ok || (part.values.text === undefined) === (part.values.data === undefined)) throw invalidRequest({ field: 'content', index });
    const text = part.values.text as string | undefined;
    if (text === undefined) continue;
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
