import { deepFreeze } from '../../json/json-copy';
import type { JsonObject, JsonValue } from '../../json/json.types';
import { LIFECYCLE_SCHEMA, OBSERVABILITY_SCHEMA, SPAN_SCHEMA, WHOLE_INPUT_FIELD, type TraceEventSchema, type TraceFieldRule } from './trace-event-schemas';
import { guardTraceInput, ownEntries } from './trace-input-guard';
import { redactSecrets } from './trace-redaction';
import { TraceStoreError } from '../trace-store.errors';
import type { ProjectedEvent, TraceIdentity, TraceIdentityKey, TraceRecordKind } from '../trace.types';

/** How {@link projectTraceEvent} treats its input: the store's `contentPolicy` and `maxEventBytes` options. */
export interface TraceProjectionSettings {
  /** `'reject'` fails an event from which anything would be dropped; `'prune'` drops it and marks the record. */
  readonly contentPolicy: 'reject' | 'prune';
  /** Bounds the input guard: strings may total 4 × this many UTF-8 bytes. */
  readonly maxEventBytes: number;
}

/** The order of the members of a record's identity. */
const IDENTITY_ORDER: readonly TraceIdentityKey[] = ['run_id', 'trace_id', 'workflow_id', 'invocation_id'];

/**
 * Steps 2–5 of an append (spec 06 §4): the input guard, projection onto the closed allow-list of the
 * event's schema, redaction of secrets in the remaining non-identity text, and identity. Returns a
 * deep-frozen event built from copies (no reference into `input`), its identity, and whether the
 * prune policy dropped anything. Runs no user code.
 *
 * Throws `TraceStoreError` only: `trace_event_input_too_large`, `invalid_trace_event` or
 * `invalid_trace_lifecycle_event` `{field}`, `trace_content_rejected`, `trace_identity_required`.
 *
 * @example
 * const { identity, event } = projectTraceEvent('observability',
 *   { event: 'runner.tool.call', timestamp_ms: 1, metadata: { run_id: 'run-1' } },
 *   { contentPolicy: 'reject', maxEventBytes: 262_144 });
 * // identity: { run_id: 'run-1' }; event.content_captured === false
 */
export function projectTraceEvent(kind: TraceRecordKind, input: unknown, settings: TraceProjectionSettings): ProjectedEvent {
  if (kind !== 'observability' && kind !== 'workflow_lifecycle') throw new TraceStoreError('invalid_trace_store_request');
  guardTraceInput(input, settings.maxEventBytes);
  const schema = schemaOf(kind, input);
  const { event, dropped } = project(schema, input);
  if (dropped && settings.contentPolicy !== 'prune') throw new TraceStoreError('trace_content_rejected');
  redact(event, schema.fields);
  const identity = identityOf(event, schema.fields);
  return Object.freeze({ identity, event: deepFreeze(event) as JsonObject, contentPruned: dropped });
}

/** The schema of a guarded input: lifecycle by kind, span when `schema` is 2, observability schema 1 when it is absent or 1. */
function schemaOf(kind: TraceRecordKind, input: unknown): TraceEventSchema {
  if (kind === 'workflow_lifecycle') return LIFECYCLE_SCHEMA;
  if (!isObject(input)) return OBSERVABILITY_SCHEMA;
  const version = ownEntries(input).get('schema');
  if (version === undefined || version === 1) return OBSERVABILITY_SCHEMA;
  if (version === 2) return SPAN_SCHEMA;
  throw new TraceStoreError('invalid_trace_event', { field: 'schema' });
}

interface Projection {
  readonly event: Record<string, JsonValue>;
  readonly dropped: boolean;
}

/** Required fields first (their failure fails the event), then every key filtered by its rule. */
function project(schema: TraceEventSchema, input: unknown): Projection {
  if (!isObject(input)) throw new TraceStoreError(schema.invalidCode, { field: WHOLE_INPUT_FIELD });
  const entries = ownEntries(input);
  for (const [key, fieldRule] of schema.fields) {
    if (!isRequired(fieldRule, entries)) continue;
    if (!entries.has(key) || !fieldRule.accepts(entries.get(key))) throw new TraceStoreError(schema.invalidCode, { field: key });
  }
  const state = { dropped: false };
  const event = filter(entries, schema.fields, state);
  return { event, dropped: state.dropped };
}

/** The members of `entries` that `rules` allow, copied in table order; anything else marks `state.dropped`. */
function filter(entries: ReadonlyMap<string, unknown>, rules: ReadonlyMap<string, TraceFieldRule>, state: { dropped: boolean }): Record<string, JsonValue> {
  const kept: Record<string, JsonValue> = {};
  for (const key of entries.keys()) if (!rules.has(key)) state.dropped = true;
  for (const [key, fieldRule] of rules) {
    const value = entries.get(key);
    const accepted = entries.has(key) && fieldRule.accepts(value);
    if (entries.has(key) && !accepted) state.dropped = true;
    if (fieldRule.stored !== undefined) kept[key] = fieldRule.stored;
    else if (accepted) kept[key] = fieldRule.members ? filter(ownEntries(value as object), fieldRule.members, state) : copyScalarOrList(value);
  }
  return kept;
}

/** An accepted leaf value is a primitive or a list of strings (`gen_ai.response.finish_reasons`). */
function copyScalarOrList(value: unknown): JsonValue {
  if (Array.isArray(value)) return value.map(copyScalarOrList);
  // JSON has no -0
  return value === 0 ? 0 : (value as JsonValue);
}

/** Step 4: secrets in every kept string but the identity members become `[redacted]`, in place. */
function redact(event: Record<string, JsonValue>, rules: ReadonlyMap<string, TraceFieldRule>): void {
  for (const [key, fieldRule] of rules) {
    const value = event[key];
    if (value === undefined || fieldRule.identity !== undefined) continue;
    if (fieldRule.members) redact(value as Record<string, JsonValue>, fieldRule.members);
    else if (typeof value === 'string') event[key] = redactSecrets(value);
    else if (Array.isArray(value)) event[key] = value.map((item: JsonValue) => (typeof item === 'string' ? redactSecrets(item) : item));
  }
}

/** Step 5: the identity members the schema places (top level, or under `metadata` in schema 1); at least one. */
function identityOf(event: Record<string, JsonValue>, rules: ReadonlyMap<string, TraceFieldRule>): TraceIdentity {
  const found: Partial<Record<TraceIdentityKey, string>> = {};
  const collect = (object: Record<string, JsonValue>, at: ReadonlyMap<string, TraceFieldRule>): void => {
    for (const [key, fieldRule] of at) {
      const value = object[key];
      if (value === undefined) continue;
      if (fieldRule.identity !== undefined) found[fieldRule.identity] = value as string;
      else if (fieldRule.members) collect(value as Record<string, JsonValue>, fieldRule.members);
    }
  };
  collect(event, rules);
  const identity: Partial<Record<TraceIdentityKey, string>> = {};
  for (const key of IDENTITY_ORDER) if (found[key] !== undefined) identity[key] = found[key];
  if (Object.keys(identity).length === 0) throw new TraceStoreError('trace_identity_required');
  return Object.freeze(identity);
}

function isRequired(fieldRule: TraceFieldRule, entries: ReadonlyMap<string, unknown>): boolean {
  return typeof fieldRule.required === 'function' ? fieldRule.required(entries) : fieldRule.required === true;
}

/** A guarded plain object (not an array). */
function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
