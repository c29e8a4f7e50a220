import { sha256Hex } from '../../shared/text/sha256';
import type { CatalogFunction, CatalogTrigger } from './schema-catalog.types';
import { collapseWhitespace } from './sql-expression';
import type { TriggerEvent, TriggerSpec } from './table-spec';

/** A trigger or function difference, before it is attached to its table. */
export interface TriggerMismatch {
  readonly property: `trigger:${string}` | `function:${string}`;
  readonly expected: string;
  readonly actual: string;
}

/**
 * The fingerprint a `TriggerSpec` declares for its function: lowercase hex SHA-256 of the language
 * name, a line feed, and the body (`pg_proc.prosrc`) with whitespace outside quotes collapsed.
 * Re-indenting a body keeps it; any other change, `RETURN NULL` for a `RAISE`, changes it.
 *
 * @example
 * fingerprintFunction('plpgsql', "BEGIN RAISE EXCEPTION 'append-only'; END");
 */
export function fingerprintFunction(language: string, body: string): string {
  return sha256Hex(`${language}\n${collapseWhitespace(body)}`);
}

const ROW = 1;
const BEFORE = 2;
const INSTEAD = 64;
const EVENT_BITS: ReadonlyArray<readonly [TriggerEvent, number]> = [
  ['insert', 4],
  ['update', 16],
  ['delete', 8],
  ['truncate', 32],
];
/** `O` fires in the default (origin) and local replication roles, `A` in every role. */
const ENABLED_STATES = new Set(['O', 'A']);

/**
 * Every difference between the declared triggers of a table and its user triggers, by name, then
 * the functions they call, by name: a declared trigger must exist with the declared definition and
 * be enabled; an undeclared one must not exist; each declared function must exist in `schema` with
 * the declared fingerprint.
 */
export function compareTriggers(
  declared: readonly TriggerSpec[],
  triggers: readonly CatalogTrigger[],
  functions: ReadonlyMap<string, CatalogFunction>,
  schema: string | null,
): TriggerMismatch[] {
  const actual = new Map(triggers.map((trigger) => [trigger.name, trigger]));
  const out: Array<TriggerMismatch & { readonly name: string }> = [];
  for (const spec of declared) {
    const found = actual.get(spec.name);
    const expected = describeTriggerSpec(spec);
    const property = `trigger:${spec.name}` as const;
    if (!found) {
      out.push({ name: spec.name, property, expected, actual: 'missing' });
      continue;
    }
    const definition = describeTrigger(found, schema);
    if (definition !== expected) out.push({ name: spec.name, property, expected, actual: withState(definition, found) });
    else if (!ENABLED_STATES.has(found.enabled)) out.push({ name: spec.name, property, expected, actual: stateName(found.enabled) });
  }
  const names = new Set(declared.map((spec) => spec.name));
  for (const found of triggers) {
    if (!names.has(found.name)) out.push({ name: found.name, property: `trigger:${found.name}`, expected: 'absent', actual: withState(describeTrigger(found, schema), found) });
  }
  const fingerprints = new Map(declared.map((spec) => [spec.function, spec.functionFingerprint]));
  const functionMismatches: Array<TriggerMismatch & { readonly name: string }> = [];
  for (const [name, fingerprint] of fingerprints) {
    const found = functions.get(name);
    const actualFingerprint = found && found.returnsTrigger ? `fingerprint ${fingerprintFunction(found.language, found.body)}` : found ? 'not a trigger function' : 'missing';
    if (actualFingerprint !== `fingerprint ${fingerprint}`) {
      functionMismatches.push({ name, property: `function:${name}`, expected: `fingerprint ${fingerprint}`, actual: actualFingerprint });
    }
  }
  return [...byName(out), ...byName(functionMismatches)].map(({ property, expected, actual }) => ({ property, expected, actual }));
}

/** `<timing> <event or event…> for each <level> execute <function>()` */
export function describeTriggerSpec(spec: TriggerSpec): string {
  const events = EVENT_BITS.filter(([event]) => spec.events.includes(event)).map(([event]) => event);
  return `${spec.timing} ${events.join(' or ')} for each ${spec.level} execute ${spec.function}()`;
}

/** The same text as {@link describeTriggerSpec}, read from the catalog, plus what a spec cannot declare. */
export function describeTrigger(trigger: CatalogTrigger, schema: string | null): string {
  const timing = trigger.type & INSTEAD ? 'instead of' : trigger.type & BEFORE ? 'before' : 'after';
  const events = EVENT_BITS.filter(([, bit]) => trigger.type & bit).map(([event]) => event);
  const fn = trigger.functionSchema === schema ? trigger.functionName : `${trigger.functionSchema}.${trigger.functionName}`;
  let text = `${timing} ${events.join(' or ')} for each ${trigger.type & ROW ? 'row' : 'statement'} execute ${fn}()`;
  if (trigger.columns.length > 0) text += ` of (${trigger.columns.join(', ')})`;
  if (trigger.hasCondition) text += ' with a when condition';
  if (trigger.argumentCount > 0) text += ` with ${trigger.argumentCount} arguments`;
  return text;
}

function withState(definition: string, trigger: CatalogTrigger): string {
  return ENABLED_STATES.has(trigger.enabled) ? definition : `${definition} (${stateName(trigger.enabled)})`;
}

function stateName(letter: string): string {
  return letter === 'D' ? 'disabled' : letter === 'R' ? 'enabled on replicas only' : `enabled state ${letter}`;
}

function byName<T extends { readonly name: string }>(items: readonly T[]): T[] {
  return [...items].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
