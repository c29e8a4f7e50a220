import type { AdmissionOutcome } from '../../admission/admission.types';
import type { EvalPhase } from '../../evaluation/eval.types';
import { LEDGER_OPERATIONS as LEDGER_OPERATION_NAMES, LedgerError } from '../../ledger/ledger.errors';
import { POLICY_REASONS as POLICY_REASON_VALUES, type PolicyOperation, type PolicyOutcome } from '../../policy/runtime-policy.types';
import { RunnerError, type RunnerErrorCode } from '../../runner/runner.errors';
import { LabelFold } from './label-fold';

/**
 * A fold of the members of the union `T`, which compiles only when `values` names every member:
 * a code added to a module's union breaks the build here instead of folding into `_other` unseen.
 */
const foldOf =
  <T extends string>() =>
  <const V extends readonly T[]>(values: V & ([Exclude<T, V[number]>] extends [never] ? unknown : never)): LabelFold =>
    new LabelFold(values);

/** Outcomes of `agent_runtime.admission.decision` (spec 01 §8). */
export const ADMISSION_OUTCOMES = foldOf<AdmissionOutcome>()([
  'granted',
  'queued',
  'rejected',
  'rate_limited',
  'queue_full',
  'expired',
  'cancelled',
  'released',
  'owner_down',
  'requester_down',
  'deployment_draining',
]);

/** Operations, outcomes and reasons of `agent_runtime.policy.decision` (spec 02 §5, §6). */
export const POLICY_OPERATIONS = foldOf<PolicyOperation>()(['agent_invocation', 'tool_call', 'content']);
export const POLICY_OUTCOMES = foldOf<PolicyOutcome>()(['allow', 'deny']);
export const POLICY_REASONS = new LabelFold(POLICY_REASON_VALUES);

/** Operations of `agent_runtime.ledger.operation` (spec 04 §8). */
export const LEDGER_OPERATIONS = new LabelFold(LEDGER_OPERATION_NAMES);

/** `'ok'` or the code a ledger operation failed with (spec 04 §7): every code of `LedgerError`. */
export const LEDGER_OUTCOMES = new LabelFold(['ok', ...LedgerError.codes]);

/** The outcome of `agent_runtime.runner.invocation`: the result's status, or the failure's code. */
export type RunnerInvocationOutcome = 'completed' | 'paused' | RunnerErrorCode | 'internal_error';

/** Outcomes of `agent_runtime.runner.invocation` (spec 03): the statuses and every code of `RunnerError`. */
export const RUNNER_OUTCOMES = new LabelFold(['completed', 'paused', 'internal_error', ...RunnerError.codes]);

/** How an invocation ended, as a run status reads (`runner.run.finished` maps its outcome the same way). */
export type InvocationStatus = 'completed' | 'paused' | 'failed' | 'cancelled' | 'timed_out';

/** The status of a (folded) runner outcome: every failure code but `cancelled` and `timeout` is `failed`. */
export function invocationStatusOf(outcome: string): InvocationStatus {
  if (outcome === 'completed' || outcome === 'paused' || outcome === 'cancelled') return outcome;
  return outcome === 'timeout' ? 'timed_out' : 'failed';
}

/** Phases of `agent_runtime.evaluation.job` (spec 05 §5). */
export const EVAL_PHASES = foldOf<EvalPhase>()(['queued', 'running', 'completed', 'failed', 'timed_out', 'cancelled']);
