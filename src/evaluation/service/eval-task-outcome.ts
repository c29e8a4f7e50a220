import { readOwnData } from '../../shared/options/option-reader';
import type { EvalPhase, EvalResult, EvalTransitionFields } from '../eval.types';

/** How an executor's promise settled. */
export type TaskSettlement = { readonly kind: 'resolved'; readonly value: unknown } | { readonly kind: 'rejected' };

/** A stored reason is a code: an executor's own reason must look like one, else it is `invalid_task_outcome`. */
const REASON_CODE = /^[a-z][a-z0-9_]{0,127}$/;

/**
 * The phase a settled task is stored with (spec 05 §5.1): `completed` with its result, `failed`
 * with the executor's reason code, `evaluation_task_failed` for a rejection (its text is never
 * read), `invalid_task_outcome` for anything else.
 */
export function storedOutcome(settlement: TaskSettlement): { readonly phase: EvalPhase; readonly fields: EvalTransitionFields } {
  if (settlement.kind === 'rejected') return failed('evaluation_task_failed');
  const own = readOwnData(settlement.value, ['status', 'result', 'reason']);
  if (own === null || own.accessors.length > 0) return failed('invalid_task_outcome');
  const { status, result, reason } = own.values;
  if (status === 'completed' && isResultShaped(result)) return { phase: 'completed', fields: { result: result as EvalResult } };
  if (status === 'error' && typeof reason === 'string' && REASON_CODE.test(reason)) return failed(reason);
  return failed('invalid_task_outcome');
}

function isResultShaped(result: unknown): boolean {
  const own = readOwnData(result, ['schema_version', 'passed', 'metrics', 'cases']);
  return own !== null && own.values.schema_version === 1 && typeof own.values.passed === 'boolean' && Array.isArray(own.values.cases);
}

function failed(reason: string): { readonly phase: EvalPhase; readonly fields: EvalTransitionFields } {
  return { phase: 'failed', fields: { reason } };
}
