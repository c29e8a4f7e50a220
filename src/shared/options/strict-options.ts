import { readOwnData, type OptionRules } from './option-reader';

/** How {@link readStrictOptions} builds its two failures. */
export interface StrictOptionFailures {
  /** Own keys that are not options: identifier names sorted, anything else reported as `'unknown'`. */
  readonly unknownKeys: (keys: readonly string[]) => Error;
  /** The first option (in sorted order) whose value breaks its rule, or `name` when the whole value is unusable. */
  readonly invalid: (option: string) => Error;
}

/**
 * Reads an options object whose spec names two failures: unknown keys (one code, `{keys}`) and a bad
 * value (another code, `{option}`). Own data properties only, no getter called, Proxies and
 * non-plain objects refused; `undefined` means "not given" for the whole value and for a key.
 *
 * @example
 * const values = readStrictOptions(options, rules, 'options', {
 *   unknownKeys: (keys) => new EvalServiceError('unknown_eval_service_options', { keys }),
 *   invalid: (option) => new EvalServiceError('invalid_eval_service_options', { option }),
 * });
 */
export function readStrictOptions<K extends string>(
  value: unknown,
  rules: OptionRules<K>,
  name: string,
  failures: StrictOptionFailures,
): { readonly [P in K]?: unknown } {
  const values = Object.create(null) as Record<K, unknown>;
  if (value === undefined) return values;
  const known = Object.keys(rules) as K[];
  const own = readOwnData(value, known);
  if (own === null) throw failures.invalid(name);
  if (own.unknown.length > 0) throw failures.unknownKeys(own.unknown);
  const accessor = [...own.accessors].sort()[0];
  if (accessor !== undefined) throw failures.invalid(accessor);
  for (const key of [...known].sort()) {
    const given = own.values[key];
    if (given === undefined) continue;
    if (!rules[key](given)) throw failures.invalid(key);
    values[key] = given;
  }
  return values;
}
