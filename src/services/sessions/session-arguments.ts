import { types } from 'node:util';
import { isPostgresIdentifier } from '../../database/schema/table-spec';
import { frozenJsonParse, storableJsonText } from '../../json';
import { systemClock, type Clock } from '../../shared/time/clock';
import { isValidId } from '../../shared/ids/id-rule';
import { optionFailureDetails, readOptions, type OptionRules } from '../../shared/options/option-reader';
import { isSafeIntegerAtLeast } from '../../shared/options/plain-object';
import { newSessionId } from '../../runner/session-id';
import type { JsonObject, JsonValue } from '../../runner/content.types';
import { RunnerError } from '../../runner/runner.errors';
import type { SessionEventKind, SessionRef } from '../../runner/session.types';
import { isTokenId } from '../../shared/ids/id-rule';

/** Longest `appName`, in UTF-16 code units (spec 03 §5). */
export const MAX_APP_NAME_LENGTH = 128;

const KINDS = {
  user_message: true,
  model_turn: true,
  tool_response: true,
  confirmation_requested: true,
  final_output: true,
  policy_audit: true,
} as const satisfies Record<SessionEventKind, true>;

/** Every {@link SessionEventKind}, as the events table's check constraint lists them. */
export const SESSION_EVENT_KINDS = Object.freeze(Object.keys(KINDS)) as readonly SessionEventKind[];

/** An app name: 1..128 characters, no control character, no lone surrogate. */
export function isAppName(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_APP_NAME_LENGTH && isValidId(value, MAX_APP_NAME_LENGTH * 3);
}

/** A session id: a token id ({@link isTokenId}). */
export function isSessionId(value: unknown): value is string {
  return isTokenId(value);
}


/** A JSON argument as a store keeps it: its canonical text and a deep-frozen copy. */
export interface JsonDocument<T extends JsonValue = JsonValue> {
  readonly text: string;
  readonly value: T;
}

/** A checked `createSession` input, the session id generated when none was given. */
export interface SessionCreation extends SessionRef {
  readonly state: JsonDocument<JsonObject>;
}

/** A checked `listSessions` input; `limit` `null` means all. */
export interface SessionListing {
  readonly appName: string;
  readonly userId: string;
  readonly limit: number | null;
  readonly offset: number;
}

/** A checked `appendEvent` event. */
export interface CheckedEvent {
  readonly event_id: string;
  readonly invocation_id: string;
  readonly author: string;
  readonly kind: SessionEventKind;
  readonly content: JsonDocument;
  readonly actions: JsonDocument<JsonObject> | undefined;
}

/** Checked `listEvents` options; `limit` `null` means all. */
export interface EventListing {
  readonly afterSeq: number;
  readonly limit: number | null;
}

/** A checked `updateState` delta: the keys to set (as one JSON object) and the keys `null` removes. */
export interface StateDelta {
  readonly set: JsonDocument<JsonObject>;
  readonly remove: readonly string[];
}

/** `invalid_run_request` naming the arguments that failed (`{field}` or `{fields}`). */
export function invalidArguments(fields: readonly string[]): RunnerError {
  return new RunnerError('invalid_run_request', optionFailureDetails(fields));
}

const count = (value: unknown): boolean => isSafeIntegerAtLeast(value, 0);
const present = (): boolean => true;

const REF_RULES: OptionRules<keyof SessionRef> = { appName: isAppName, userId: isValidId, sessionId: isSessionId };

/**
 * `{appName, userId, sessionId}`, each present and valid. Other keys are ignored, so a context
 * carrying more than the three (a `ReadonlyContext`) addresses its session.
 */
export function sessionRef(ref: unknown): SessionRef {
  const values = readArguments(ref, REF_RULES, ['appName', 'userId', 'sessionId'], 'ref', 'ignore');
  return Object.freeze({ appName: values.appName as string, userId: values.userId as string, sessionId: values.sessionId as string });
}

/** `createSession` input: `sessionId` generated when absent; `state` a JSON object, `{}` when absent. */
export function sessionCreation(input: unknown): SessionCreation {
  const values = readArguments(input, { ...REF_RULES, state: present }, ['appName', 'userId'], 'input', 'refuse');
  const state = values.state === undefined ? EMPTY_STATE : jsonDocument(values.state, 'state', true);
  return Object.freeze({
    appName: values.appName as string,
    userId: values.userId as string,
    sessionId: (values.sessionId as string | undefined) ?? newSessionId(),
    state: state as JsonDocument<JsonObject>,
  });
}

/** `listSessions` input: `limit` and `offset` non-negative integers. */
export function sessionListing(input: unknown): SessionListing {
  const rules = { appName: isAppName, userId: isValidId, limit: count, offset: count };
  const values = readArguments(input, rules, ['appName', 'userId'], 'input', 'refuse');
  return Object.freeze({
    appName: values.appName as string,
    userId: values.userId as string,
    limit: (values.limit as number | undefined) ?? null,
    offset: (values.offset as number | undefined) ?? 0,
  });
}

const EVENT_RULES = {
  event_id: isValidId,
  invocation_id: isValidId,
  author: isValidId,
  kind: (value: unknown): boolean => typeof value === 'string' && Object.hasOwn(KINDS, value),
  content: present,
  actions: present,
};

/**
 * An `appendEvent` event: ids and author valid ids, `kind` one of {@link SESSION_EVENT_KINDS},
 * `content` JSON-safe, `actions` (optional) a JSON object. The store's own fields (`session_id`,
 * `seq`, `created_at_ms`) are refused like any other unknown key.
 */
export function checkedEvent(event: unknown): CheckedEvent {
  const values = readArguments(event, EVENT_RULES, ['event_id', 'invocation_id', 'author', 'kind', 'content'], 'event', 'refuse');
  const failed: string[] = [];
  const content = jsonDocument(values.content, 'content', false, failed);
  const actions = values.actions === undefined ? undefined : jsonDocument(values.actions, 'actions', true, failed);
  if (failed.length > 0) throw invalidArguments(failed);
  return Object.freeze({
    event_id: values.event_id as string,
    invocation_id: values.invocation_id as string,
    author: values.author as string,
    kind: values.kind as SessionEventKind,
    content: content as JsonDocument,
    actions: actions as JsonDocument<JsonObject> | undefined,
  });
}

/** `listEvents` options: `afterSeq` and `limit` non-negative integers. */
export function eventListing(options: unknown): EventListing {
  const values = readArguments(options, { afterSeq: count, limit: count }, [], 'options', 'refuse');
  return Object.freeze({ afterSeq: (values.afterSeq as number | undefined) ?? 0, limit: (values.limit as number | undefined) ?? null });
}

/** `updateState` delta: a JSON object; its `null` members name keys to remove. */
export function stateDelta(delta: unknown): StateDelta {
  const document = jsonDocument(delta, 'delta', true) as JsonDocument<JsonObject>;
  const set: [string, JsonValue][] = [];
  const remove: string[] = [];
  for (const [key, value] of Object.entries(document.value)) {
    if (value === null) remove.push(key);
    else set.push([key, value]);
  }
  // fromEntries defines own properties, so a "__proto__" key stays a key
  const setValue = Object.freeze(Object.fromEntries(set)) as JsonObject;
  return Object.freeze({ set: Object.freeze({ text: JSON.stringify(setValue), value: setValue }), remove: Object.freeze(remove) });
}

/** `updateState` options: `expectedVersion` a non-negative integer, `null` when absent. */
export function expectedVersion(options: unknown): number | null {
  const values = readArguments(options, { expectedVersion: count }, [], 'options', 'refuse');
  return (values.expectedVersion as number | undefined) ?? null;
}

/** What a session service was configured with: its clock, and (Postgres) the schema of its tables. */
export interface SessionServiceSettings {
  readonly clock: Clock;
  /** `null`: the connection's `current_schema()`. */
  readonly schema: string | null;
}

/**
 * The options of a session service's constructor: `clock` (an object with `wallNow()`) and, when
 * `withSchema`, `schema` (a Postgres identifier). Anything else is `invalid_runner_options`.
 */
export function sessionServiceSettings(options: unknown, withSchema: boolean): SessionServiceSettings {
  const rules: OptionRules<'clock' | 'schema'> = { clock: isClock, schema: withSchema ? isPostgresIdentifier : () => false };
  const read = readOptions(options, rules, { name: 'options', unknownKeys: 'refuse' });
  if (!read.ok) throw new RunnerError('invalid_runner_options', optionFailureDetails(read.fields));
  return Object.freeze({ clock: (read.values.clock as Clock | undefined) ?? systemClock, schema: (read.values.schema as string | undefined) ?? null });
}

function isClock(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || types.isProxy(value)) return false;
  try {
    return typeof (value as Clock).wallNow === 'function';
  } catch {
    return false;
  }
}

const EMPTY_STATE: JsonDocument<JsonObject> = Object.freeze({ text: '{}', value: Object.freeze({}) });

function readArguments<K extends string>(
  value: unknown,
  rules: OptionRules<K>,
  required: readonly NoInfer<K>[],
  name: string,
  unknownKeys: 'refuse' | 'ignore',
): { readonly [P in K]?: unknown } {
  const read = readOptions(value, rules, { name, unknownKeys });
  if (!read.ok) throw invalidArguments(read.fields);
  if (value === undefined && required.length > 0) throw invalidArguments([name]);
  const missing = required.filter((key) => read.values[key] === undefined);
  if (missing.length > 0) throw invalidArguments(missing);
  return read.values;
}

/**
 * Canonical JSON text and a frozen copy of `value`; refused when JSON cannot hold it, when a string
 * or key holds U+0000 (Postgres `jsonb` refuses it, and both stores must agree), or, with
 * `objectOnly`, when it is not a JSON object. A failure is thrown, or collected in `failed`.
 */
function jsonDocument(value: unknown, field: string, objectOnly: boolean, failed?: string[]): JsonDocument | undefined {
  const text = storableJsonText(value);
  const ok = text !== undefined && (!objectOnly || text.startsWith('{'));
  if (!ok) {
    if (failed === undefined) throw invalidArguments([field]);
    failed.push(field);
    return undefined;
  }
  return Object.freeze({ text: text as string, value: frozenJsonParse(text as string) as JsonValue });
}
