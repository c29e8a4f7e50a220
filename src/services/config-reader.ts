import type { ErrorDetails } from '../shared/errors/agent-runtime-error';
import { optionFailureDetails, readOptions, readOwnData, type OptionRules } from '../shared/options/option-reader';
import { integerIn } from '../shared/options/option-rules';
import { RuntimeServiceError } from './runtime-service.errors';

/**
 * One object of the bundle's configuration, read with the shared option reader and sorted the way
 * spec 07 §3 reports it: not a plain object at all, unknown keys (with their names, sorted), or known
 * keys whose value breaks its rule or is held by an accessor (with their names, sorted).
 */
export type ConfigRead<K extends string> =
  | { readonly ok: true; readonly values: { readonly [P in K]?: unknown } }
  | { readonly ok: false; readonly failure: 'expected_object' }
  | { readonly ok: false; readonly failure: 'unknown_keys' | 'invalid_values'; readonly fields: readonly string[] };

/** The rule of a key whose value is checked elsewhere (by its own reader, or with a code of its own): the reader only reads it. */
export const anyValue = (): boolean => true;

/**
 * True for what the shared reader can read: a plain object that is not a Proxy. A nested options
 * object is checked with it first, so that its own reading names keys only, never the whole object.
 */
export function isReadableObject(value: unknown): boolean {
  return readOwnData(value, []) !== null;
}

/**
 * Reads `value` (`undefined` is `{}`) with `rules`, refusing unknown keys. The reader reports an
 * unusable whole value under its name, which an unknown key could also spell; the spec gives that
 * case a reason of its own (`expected_object`), so it is told apart here first.
 *
 * @example
 * const read = readConfig(config, { maxRouterQueue: integerIn(1) });
 * if (!read.ok && read.failure === 'unknown_keys') throw invalid('unknown_keys', optionFailureDetails(read.fields));
 */
export function readConfig<K extends string>(value: unknown, rules: OptionRules<K>): ConfigRead<K> {
  if (value !== undefined && !isReadableObject(value)) return { ok: false, failure: 'expected_object' };
  const read = readOptions(value, rules, { name: 'config', unknownKeys: 'refuse' });
  if (read.ok) return read;
  return read.unknown.length > 0 ? { ok: false, failure: 'unknown_keys', fields: read.unknown } : { ok: false, failure: 'invalid_values', fields: read.fields };
}

/** A component of the bundle that has a router (and the router's `kind`). */
export type ComponentKind = 'artifact' | 'memory';

/** `invalid_runtime_service_component_config` with `{kind, reason}` and what else names the failure. */
export function invalidComponentConfig(kind: ComponentKind, reason: string, details: ErrorDetails = {}): RuntimeServiceError {
  return new RuntimeServiceError('invalid_runtime_service_component_config', { kind, reason, ...details });
}

/** An `adapterConfig` read by {@link readAdapterConfig}: the keys given, and the refusal of a key outside a range. */
export interface AdapterConfigRead {
  readonly given: Readonly<Record<string, number>>;
  readonly outOfRange: (field: string, valueRange: readonly [number, number]) => RuntimeServiceError;
}

/**
 * Reads the `adapterConfig` of a component's adapter (spec 07 §3): every key an integer of its
 * inclusive range. Refusals are `invalid_runtime_service_component_config` `{kind, reason}`: not a
 * plain object → `expected_object` + `field: 'adapterConfig'`; unknown keys → `adapter_unknown_keys`
 * + `field`/sorted `fields`; else the first key (sorted) whose value breaks its range →
 * `adapter_config` + `field` + `value_range`. A range belongs to one key, so one key is named.
 */
export function readAdapterConfig(kind: ComponentKind, raw: unknown, ranges: Readonly<Record<string, readonly [number, number]>>): AdapterConfigRead {
  const rules = Object.fromEntries(Object.entries(ranges).map(([key, [min, max]]) => [key, integerIn(min, max)]));
  const outOfRange = (field: string, valueRange: readonly [number, number]) => invalidComponentConfig(kind, 'adapter_config', { field, value_range: [...valueRange] });
  const read = readConfig(raw, rules);
  if (read.ok) return { given: read.values as Record<string, number>, outOfRange };
  if (read.failure === 'expected_object') throw invalidComponentConfig(kind, 'expected_object', { field: 'adapterConfig' });
  if (read.failure === 'unknown_keys') throw invalidComponentConfig(kind, 'adapter_unknown_keys', optionFailureDetails(read.fields));
  const first = read.fields[0];
  throw outOfRange(first, ranges[first]);
}
