import type { ResponseMatchMode } from '../eval.types';
import { normaliseText, tokensOf } from './text-normalisation';

/**
 * The `response_match` score of one case (spec 05 §7): 1 when `actual` and `expected` are equal after
 * {@link normaliseText}; otherwise 0 in `exact` mode, and in `rouge_1` mode the ROUGE-1 F1 of the
 * whitespace tokens, with `actual` as the candidate and `expected` as the reference: overlap = Σ over
 * tokens of the smaller count, P = overlap / candidate tokens, R = overlap / reference tokens,
 * F = 2PR / (P + R), and 0 when either side has no token.
 *
 * F is computed as 2·overlap / (candidate + reference), which is the same value with one rounding.
 *
 * @example
 * responseMatchScore('The cat sat', 'the cat sat down', 'rouge_1'); // 2·3 / (3 + 4) = 6/7
 * responseMatchScore('The cat sat', 'the cat sat down', 'exact');   // 0
 */
export function responseMatchScore(actual: string, expected: string, mode: ResponseMatchMode): number {
  const candidate = normaliseText(actual);
  const reference = normaliseText(expected);
  if (candidate === reference) return 1;
  if (mode === 'exact') return 0;
  return rouge1F1(tokensOf(candidate), tokensOf(reference));
}

function rouge1F1(candidate: readonly string[], reference: readonly string[]): number {
  if (candidate.length === 0 || reference.length === 0) return 0;
  const referenceCounts = new Map<string, number>();
  for (const token of reference) referenceCounts.set(token, (referenceCounts.get(token) ?? 0) + 1);
  let overlap = 0;
  for (const token of candidate) {
    const left = referenceCounts.get(token) ?? 0;
    if (left === 0) continue;
    overlap += 1;
    referenceCounts.set(token, left - 1);
  }
  return (2 * overlap) / (candidate.length + reference.length);
}
