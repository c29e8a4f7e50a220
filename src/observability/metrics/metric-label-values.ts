import type { AdmissionOutcome } from '../../admission/admission.types';
import type { EvalPhase } from '../../evaluation/eval.types';
import type { LedgerErrorCode, LedgerOperation } from '../../ledger/ledger.errors';
import { POLICY_REASONS as POLICY_REASON_VALUES, type PolicyOperation, type PolicyOutcome } from '../../policy/runtime-policy.types';
import type { RunnerErrorCode } from '../../runner/runner.errors';
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

const LEDGER_OPERATION_LIST = [
  'create',
  'claim',
  'create_and_claim',
  'renew',
  'checkpoint',
  'finish',
  'delete',
  'get',
  'list_expired',
  'recover_expired',
] as const satisfies readonly LedgerOperation[];

/** Operations of `agent_runtime.ledger.operation` (spec 04 §8). */
export const LEDGER_OPERATIONS = foldOf<LedgerOperation>()(LEDGER_OPERATION_LIST);

type ArgumentsCode = `invalid_${LedgerOperation}_arguments`;

/** `'ok'` or the code a ledger operation failed with (spec 04 §7). */
export const LEDGER_OUTCOMES = new LabelFold([
  ...foldOf<'ok' | Exclude<LedgerErrorCode, ArgumentsCode>>()([
    'ok',
    'already_exists',
    'not_found',
    'completed',
    'invocation_owned',
    'lease_expired',
    'stale_owner',
    'invalid_terminal_phase',
    'invalid_ledger_options',
    'invalid_ledger_handle',
    'schema_mismatch',
    'ledger_unavailable',
    'ledger_instance_id_in_use',
    'transaction_aborted',
  ]).values,
  ...LEDGER_OPERATION_LIST.map((operation): ArgumentsCode => `invalid_${operation}_arguments`),
]);

/** The outcome of `agent_runtime.runner.invocation`: the result's status, or the failure's code. */
export type RunnerInvocationOutcome = 'completed' | 'paused' | RunnerErrorCode | 'internal_error';

/** Outcomes of `agent_runtime.runner.invocation` (spec 03). */
export const RUNNER_OUTCOMES = foldOf<RunnerInvocationOutcome>()([
  'completed',
  'paused',
  'internal_error',
  'invalid_runner_options',
  'invalid_runner_admission_control',
  'invalid_runner_runtime_policy',
  'admission_failed',
  'runtime_policy_denied',
  'runtime_policy_audit_persistence_failed',
  'invalid_plugin_amendment',
  'plugin_failed',
  'model_call_limit_exceeded',
  'ledger_failed',
  'session_store_failed',
  'invocation_fence_lost',
  'model_failed',
  'schema_mismatch',
  'session_not_found',
  'invocation_not_found',
  'run_not_found',
  'agent_not_found',
  'resume_input_required',
  'invalid_run_request',
  'invocation_owned',
  'invocation_completed',
  'session_state_conflict',
  'run_not_active',
  'run_events_evicted',
  'run_capacity_reached',
  'cancelled',
  'timeout',
]);

/** How an invocation ended, as a run status reads (`runner.run.finished` maps its outcome the same way). */
export type InvocationStatus = 'completed' | 'paused' | 'failed' | 'cancelled' | 'timed_out';

/** The status of a (folded) runner outcome: every failure code but `cancelled` and `timeout` is `failed`. */
export function invocationStatusOf(outcome: string): InvocationStatus {
  if (outcome === 'completed' || outcome === 'paused' || outcome === 'cancelled') return outcome;
  return outcome === 'timeout' ? 'timed_out' : 'failed';
}

/** Phases of `agent_runtime.evaluation.job` (spec 05 §5). */
export const EVAL_PHASES = foldOf<EvalPhase>()(['queued', 'running', 'completed', 'failed', 'timed_out', 'cancelled']);
