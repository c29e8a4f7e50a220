/** The label value that every value outside a closed set folds into. */
export const OTHER_LABEL_VALUE = '_other';

/**
 * A closed set of label values. `fold` answers a member as itself and anything else (an
 * unconfigured agent id, a code a module does not define, a non-string) as {@link OTHER_LABEL_VALUE},
 * so a label fed from untrusted or open-ended input takes at most `size + 1` values.
 *
 * @example
 * const agents = new LabelFold(['support', 'billing']);
 * agents.fold('support'); // 'support'
 * agents.fold('user-42'); // '_other'
 */
export class LabelFold {
  readonly #values: ReadonlySet<string>;

  constructor(values: Iterable<string>) {
    this.#values = new Set(values);
  }

  /** The members, in insertion order. */
  get values(): readonly string[] {
    return [...this.#values];
  }

  fold(value: unknown): string {
    return typeof value === 'string' && this.#values.has(value) ? value : OTHER_LABEL_VALUE;
  }
}
