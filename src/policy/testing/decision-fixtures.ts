import { measure } from '../measure';

/** The keys of a decision record (spec 02 §5), sorted: written out here, not read from the code under test. */
export const DECISION_KEYS = [
  'budget',
  'decided_at_ms',
  'decision_digest',
  'decision_id',
  'operation',
  'outcome',
  'policy_fingerprint',
  'policy_id',
  'reason',
  'schema_version',
  'subject',
];

/** Every reason tag of spec 02 §5. */
export const POLICY_REASONS = [
  'allowed',
  'not_allowed',
  'explicitly_denied',
  'argument_budget_exceeded',
  'content_budget_exceeded',
  'invalid_arguments',
  'invalid_content',
  'invalid_subject',
  'invalid_policy',
  'policy_evaluation_failed',
] as const;

/** For every limit below `size` (in steps of `step`): exceeded, with `limit < bytes ≤ size`. */
export function expectExceededBelow(value: unknown, size: number, step: number): void {
  for (let limit = 0; limit < size; limit += step) {
    const result = measure(value, limit);
    expect(result.exceeded).toBe(true);
    expect(result.bytes).toBeGreaterThan(limit);
    expect(result.bytes).toBeLessThanOrEqual(size);
  }
}
