const PUNCTUATION = /\p{P}/gu;
const WHITESPACE = /\s+/gu;

/**
 * The form both sides of `response_match` are compared in (spec 05 §7): NFKC, lower case, every
 * Unicode punctuation character (`\p{P}`) removed, runs of whitespace collapsed to one space, trimmed.
 * Punctuation is removed, not replaced, so `"don't"` becomes `"dont"` and `"well-known"` `"wellknown"`.
 *
 * @example
 * normaliseText('  Ｈｅｌｌｏ,\n  World! '); // 'hello world'
 */
export function normaliseText(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(PUNCTUATION, '').replace(WHITESPACE, ' ').trim();
}

/** The whitespace tokens of a normalised text; none for an empty text. */
export function tokensOf(normalised: string): string[] {
  return normalised.length === 0 ? [] : normalised.split(' ');
}
