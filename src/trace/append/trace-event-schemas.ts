import { isPlainObject } from '../../shared/options/plain-object';
import { integerIn, oneOf } from '../../shared/options/option-rules';
import type { TraceIdentityKey } from '../trace.types';

/** True when a (guarded, JSON) value may be kept under its key. */
export type TraceValueRule = (value: unknown) => boolean;

/** The rule of one key of an event schema (spec 06 §4, the three tables). */
export interface TraceFieldRule {
  readonly accepts: TraceValueRule;
  /** Required fields fail the event (`invalid_trace_event` / `invalid_trace_lifecycle_event`) instead of being dropped. */
  readonly required?: boolean | ((input: ReadonlyMap<string, unknown>) => boolean);
  /** An identity member: never redacted, and read into the record's identity. */
  readonly identity?: TraceIdentityKey;
  /** A nested object whose own keys are filtered by these rules. */
  readonly members?: ReadonlyMap<string, TraceFieldRule>;
  /** What is stored whatever the input holds (`content_captured` is always `false`). */
  readonly stored?: false;
}

/** A closed allow-list for one schema. Keys are matched exactly and case-sensitively. */
export interface TraceEventSchema {
  readonly invalidCode: 'invalid_trace_event' | 'invalid_trace_lifecycle_event';
  /** In table order, which is also the order of the stored event's keys. */
  readonly fields: ReadonlyMap<string, TraceFieldRule>;
}

const utf8Bytes = (value: string): number => Buffer.byteLength(value, 'utf8');

/** A string of `min..max` UTF-8 bytes (its length is a lower bound of its bytes, so huge strings are refused at once). */
const stringOfBytes =
  (min: number, max: number): TraceValueRule =>
  (value) => {
    if (typeof value !== 'string' || value.length > max) return false;
    const bytes = utf8Bytes(value);
    return bytes >= min && bytes <= max;
  };

const finiteNumber: TraceValueRule = (value) => typeof value === 'number' && Number.isFinite(value);
const finiteAtLeastZero: TraceValueRule = (value) => finiteNumber(value) && (value as number) >= 0;
const isFalse: TraceValueRule = (value) => value === false;
const EVENT_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
const eventName: TraceValueRule = (value) => typeof value === 'string' && EVENT_NAME.test(value);

const identifier = stringOfBytes(1, 512);
const shortText = stringOfBytes(0, 512);
const nonNegativeInteger = integerIn(0);

const rule = (accepts: TraceValueRule, extra: Omit<TraceFieldRule, 'accepts'> = {}): TraceFieldRule => ({ accepts, ...extra });
const required = (accepts: TraceValueRule): TraceFieldRule => rule(accepts, { required: true });
const identity = (key: TraceIdentityKey, isRequired = false): TraceFieldRule => rule(identifier, { identity: key, required: isRequired });
const nested = (members: Record<string, TraceFieldRule>): TraceFieldRule =>
  rule((value) => isPlainObject(value) && !Array.isArray(value), { members: new Map(Object.entries(members)) });
const each = (keys: readonly string[], fieldRule: TraceFieldRule): Record<string, TraceFieldRule> =>
  Object.fromEntries(keys.map((key) => [key, fieldRule]));

const MEASUREMENTS = nested(each(['count', 'duration_ms', 'duration', 'system_time', 'monotonic_time', 'bytes', 'frames'], rule(finiteNumber)));

const METADATA = nested({
  run_id: identity('run_id'),
  invocation_id: identity('invocation_id'),
  ...each(['session', 'agent', 'model', 'tool', 'tool_digest', 'call_id'], rule(shortText)),
  trace_id: identity('trace_id'),
  ...each(['span_id', 'parent_id', 'tracestate'], rule(shortText)),
  trace_flags: rule(integerIn(0, 255)),
});

const finishReasons: TraceValueRule = (value) =>
  Array.isArray(value) && value.length <= 16 && value.every((reason) => typeof reason === 'string' && reason.length <= 64 && utf8Bytes(reason) <= 64);
const attributeValue: TraceValueRule = (value) => shortText(value) || typeof value === 'boolean' || finiteNumber(value);

const ATTRIBUTES = nested({
  ...each(['phase', 'hook', 'outcome', 'status', 'stream', 'capture_error', 'error.type'], rule(attributeValue)),
  ...each(['gen_ai.system', 'gen_ai.operation.name', 'gen_ai.request.model', 'gen_ai.response.model', 'gen_ai.response.id'], rule(attributeValue)),
  'gen_ai.response.finish_reasons': rule(finishReasons),
  ...each(['gen_ai.usage.input_tokens', 'gen_ai.usage.output_tokens'], rule(nonNegativeInteger)),
  ...each(['gen_ai.tool.name', 'gen_ai.tool.call.id', 'gen_ai.agent.name'], rule(attributeValue)),
});

const CONTENT_CAPTURED = rule(isFalse, { stored: false });

const schema = (invalidCode: TraceEventSchema['invalidCode'], fields: Record<string, TraceFieldRule>): TraceEventSchema =>
  Object.freeze({ invalidCode, fields: new Map(Object.entries(fields)) });

/** Observability schema 1 (`schema` absent or 1). */
export const OBSERVABILITY_SCHEMA = schema('invalid_trace_event', {
  schema: rule(oneOf(1)),
  event: required(eventName),
  timestamp_ms: required(nonNegativeInteger),
  measurements: MEASUREMENTS,
  metadata: METADATA,
  attributes: ATTRIBUTES,
  content_captured: CONTENT_CAPTURED,
});

/** Span schema 2. */
export const SPAN_SCHEMA = schema('invalid_trace_event', {
  schema: required(oneOf(2)),
  name: required(stringOfBytes(1, 128)),
  trace_id: identity('trace_id', true),
  span_id: required(identifier),
  parent_id: rule(identifier),
  tracestate: rule(identifier),
  run_id: identity('run_id'),
  invocation_id: identity('invocation_id'),
  trace_flags: rule(integerIn(0, 255)),
  kind: rule(oneOf('internal', 'server', 'client', 'producer', 'consumer')),
  start_time_ms: required(finiteAtLeastZero),
  end_time_ms: rule(finiteAtLeastZero),
  duration_ms: rule(finiteAtLeastZero),
  status: rule(oneOf('unset', 'ok', 'error')),
  attributes: ATTRIBUTES,
  content_captured: CONTENT_CAPTURED,
});

/** Workflow / run lifecycle schema 1: an `agent_run` event of a run not yet admitted omits `invocation_id`. */
export const LIFECYCLE_SCHEMA = schema('invalid_trace_lifecycle_event', {
  type: required(stringOfBytes(1, 128)),
  sequence: required(integerIn(1)),
  timestamp: required(nonNegativeInteger),
  workflow_id: identity('workflow_id', true),
  workflow_kind: required(identifier),
  invocation_id: rule(identifier, { identity: 'invocation_id', required: (input) => input.get('workflow_kind') !== 'agent_run' }),
  run_id: identity('run_id'),
  ...each(['node_id', 'node_type', 'outcome', 'pause_kind', 'parent', 'join_id', 'from', 'to', 'fork_id'], rule(shortText)),
  ...each(['iteration', 'branch_count', 'completed_count', 'attempt'], rule(nonNegativeInteger)),
});

/** The name errors use for the whole input, or for a place under a key no schema allows. */
export const WHOLE_INPUT_FIELD = 'input';

const TOP_LEVEL_KEYS = new Set([OBSERVABILITY_SCHEMA, SPAN_SCHEMA, LIFECYCLE_SCHEMA].flatMap((known) => [...known.fields.keys()]));
const NESTED_KEYS = new Map(
  [...OBSERVABILITY_SCHEMA.fields].filter(([, fieldRule]) => fieldRule.members).map(([key, fieldRule]) => [key, new Set(fieldRule.members?.keys())]),
);

/**
 * The `{field}` an error names for the value under `key` inside the place named `parent`: a dotted
 * path of allow-listed names only (`metadata.run_id`), cut at the first key no schema allows, so a
 * user's key never reaches an error.
 */
export function childFieldName(parent: string, key: string): string {
  if (parent === WHOLE_INPUT_FIELD) return TOP_LEVEL_KEYS.has(key) ? key : WHOLE_INPUT_FIELD;
  const members = NESTED_KEYS.get(parent);
  return members?.has(key) ? `${parent}.${key}` : parent;
}
