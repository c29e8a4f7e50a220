import { LabelFold, OTHER_LABEL_VALUE } from './label-fold';
import { ADMISSION_OUTCOMES, invocationStatusOf, LEDGER_OUTCOMES, RUNNER_OUTCOMES } from './metric-label-values';

describe('LabelFold', () => {
  test('a member folds to itself, anything else to _other', () => {
    const fold = new LabelFold(['support', 'billing']);
    expect(fold.fold('support')).toBe('support');
    for (const value of ['Support', 'user-42', '', undefined, null, 7, {}, ['support']]) expect(fold.fold(value)).toBe(OTHER_LABEL_VALUE);
    expect(fold.values).toEqual(['support', 'billing']);
  });

  test('the spec unions: admission outcomes, ledger codes (the per-operation argument codes too), runner outcomes', () => {
    expect(ADMISSION_OUTCOMES.values).toHaveLength(11);
    expect(ADMISSION_OUTCOMES.fold('rate_limited')).toBe('rate_limited');
    expect(LEDGER_OUTCOMES.fold('invalid_list_expired_arguments')).toBe('invalid_list_expired_arguments');
    expect(LEDGER_OUTCOMES.fold('invalid_unknown_arguments')).toBe(OTHER_LABEL_VALUE);
    expect(RUNNER_OUTCOMES.fold('run_capacity_reached')).toBe('run_capacity_reached');
  });

  test('runner outcomes map to run statuses', () => {
    expect(['completed', 'paused', 'cancelled', 'timeout', 'model_failed', OTHER_LABEL_VALUE].map(invocationStatusOf)).toEqual(['completed', 'paused', 'cancelled', 'timed_out', 'failed', 'failed']);
  });
});
