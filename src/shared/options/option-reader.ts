import { types } from 'node:util';
import type { ErrorDetails } from '../errors/agent-runtime-error';
import { isValidId } from '../ids/id-rule';
import { isPlainObject } from './plain-object';

/** What to do with keys a reader does not know. */
export type UnknownKeys = 'refuse' | 'ignore';

/** The own properties of an untrusted object, read without running any of its code. */
export interface OwnData<K extends string> {
  /** Own data values of the known keys (null prototype); a key that is absent is absent here too. */
  readonly values: { readonly [P in K]?: unknown };
  /** Known keys held by an accessor (its getter is never called). */
  readonly accessors: readonly K[];
  /** Own keys that are not known: symbols and non-identifier names are reported as `'unknown'`. Sorted. */
  readonly unknown: readonly string[];
}

/** A key name safe to name in an error: an identifier, never arbitrary input. */
const REPORTABLE_KEY = /^[A-Za-z_$][A-Za-z0-9_$]{0,63}$/;

/**
 * Reads the own properties of `value`: own data properties only (a getter is never called), no
 * prototype, and `null` for anything but a plain object (prototype `Object.prototype` or `null`) that
 * is not a Proxy, or when the object throws while being looked at.
 */
export function readOwnData<K extends string>(value: unknown, known: readonly K[]): OwnData<K> | null {
  if (typeof value !== 'object' || value === null || types.isProxy(value)) return null;
  try {
    if (!isPlainObject(value)) return null;
    const values = Object.create(null) as Record<K, unknown>;
    const accessors: K[] = [];
    const unknown = new Set<string>();
    for (const key of Reflect.ownKeys(value)) {
      const descriptor = Object.getOwnPropertyDescriptor(value, key) as PropertyDescriptor;
      if (typeof key === 'string' && (known as readonly string[]).includes(key)) {
        if ('value' in descriptor) values[key as K] = descriptor.value;
        else accessors.push(key as K);
      } else {
        unknown.add(typeof key === 'string' && REPORTABLE_KEY.test(key) ? key : 'unknown');
      }
    }
    return { values, accessors, unknown: [...unknown].sort() };
  } catch {
    // a frozen-in-the-middle exotic object: nothing trustworthy to read
    return null;
  }
}

/**
 * The entries of a map given as a plain object keyed by ids (agents, tenants): `null` unless
 * {@link readOwnData} accepts it and every own key is a valid id held by a data property (a getter is
 * never called).
 */
export function readIdRecord(value: unknown): Array<[string, unknown]> | null {
  if (readOwnData(value, []) === null) return null;
  const entries: Array<[string, unknown]> = [];
  for (const key of Reflect.ownKeys(value as object)) {
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    if (typeof key !== 'string' || !isValidId(key) || descriptor === undefined || !('value' in descriptor)) return null;
    entries.push([key, descriptor.value]);
  }
  return entries;
}

/** One rule per known option: true when the (present, not `undefined`) value is acceptable. */
export type OptionRules<K extends string> = { readonly [P in K]: (value: unknown) => boolean };

/** How {@link readOptions} reads. */
export interface ReadOptionsSettings {
  /** The name reported when the whole value is unusable (not a plain object, a Proxy). */
  readonly name: string;
  /** Refuse unknown keys (each becomes a failed field) or ignore them. */
  readonly unknownKeys: UnknownKeys;
}

/** What failed in a read: every failed name, and the unknown keys among them. */
export interface OptionReadFailure {
  readonly ok: false;
  /** Every failed name, sorted: unknown keys, accessors, values that break their rule, or the reader's `name` alone. */
  readonly fields: readonly string[];
  /** The unknown keys among `fields`, sorted (none when unknown keys are ignored). */
  readonly unknown: readonly string[];
}

/** The validated values (`undefined` ones left out), or what failed. */
export type ReadOptionsResult<K extends string> = { readonly ok: true; readonly values: { readonly [P in K]?: unknown } } | OptionReadFailure;

/**
 * The one reader of untrusted options objects and call arguments: own data properties only, no
 * getter called, proxies refused, unknown keys refused or ignored, every present value checked by its
 * rule. `undefined` (the whole value, or a key's value) means "not given".
 *
 * @example
 * const read = readOptions(options, { leaseMs: isLease }, { name: 'options', unknownKeys: 'refuse' });
 * if (!read.ok) throw new LedgerError('invalid_claim_arguments', optionFailureDetails(read.fields));
 */
export function readOptions<K extends string>(value: unknown, rules: OptionRules<K>, settings: ReadOptionsSettings): ReadOptionsResult<K> {
  if (value === undefined) return { ok: true, values: Object.create(null) as Record<K, unknown> };
  const known = Object.keys(rules) as K[];
  const own = readOwnData(value, known);
  if (own === null) return { ok: false, fields: [settings.name], unknown: [] };
  const unknown = settings.unknownKeys === 'refuse' ? own.unknown : [];
  const failed = new Set<string>([...own.accessors, ...unknown]);
  const values = Object.create(null) as Record<K, unknown>;
  for (const key of known) {
    const given = own.values[key];
    if (given === undefined) continue;
    if (rules[key](given)) values[key] = given;
    else failed.add(key);
  }
  return failed.size > 0 ? { ok: false, fields: [...failed].sort(), unknown } : { ok: true, values };
}

/**
 * The names a spec that ranks failures reports: every unknown key when there is one (a spec may give
 * them their own code), else the first failed name in sorted order.
 *
 * @example
 * if (!read.ok) throw new EvalServiceError(read.unknown.length > 0 ? 'unknown_eval_store_options' : 'invalid_eval_store_options', optionFailureDetails(firstFailures(read)));
 */
export function firstFailures(failure: OptionReadFailure): readonly string[] {
  return failure.unknown.length > 0 ? failure.unknown : failure.fields.slice(0, 1);
}

/** The details vocabulary of every module: `{field}` for one failure, `{fields}` (sorted) for several. */
export function optionFailureDetails(fields: readonly string[]): ErrorDetails {
  return fields.length === 1 ? { field: fields[0] } : { fields: [...fields].sort() };
}
