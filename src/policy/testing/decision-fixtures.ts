/** The keys of a decision record (spec 02 §5), sorted: written out here, not read from the code under test. */
export const DECISION_KEYS = [
  'approved_by',
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
  'subject_digest',
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
