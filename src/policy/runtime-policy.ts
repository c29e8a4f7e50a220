import { systemClock, type Clock } from '../shared/time/clock';
import { TelemetryEvents } from '../telemetry/telemetry-events';
import { emitSafely, type TelemetrySink } from '../telemetry/telemetry-sink';
import { AGENT_CHECK, CONTENT_CHECK, evaluateCheck, limitOf, TOOL_CHECK, UNDECLARED_TOOL_CHECK, type PolicyCheck, type Verdict } from './policy-checks';
import { buildDecision, INVALID_POLICY_FINGERPRINT, INVALID_POLICY_ID, INVALID_SUBJECT } from './policy-decision';
import { isValidSubject, undeclaredNameDigest, UNKNOWN_TOOL_SUBJECT } from './policy-name';
import { isValidId } from '../shared/ids/id-rule';
import { compilePolicySpec, type CompiledPolicySpec, type RuntimePolicySpec } from './runtime-policy-compiler';
import { RuntimePolicyError } from './runtime-policy.errors';
import type {
  InvalidRuntimePolicyDescription,
  PolicyDecision,
  PolicyDecisionEvent,
  RuntimePolicyDescription,
} from './runtime-policy.types';

/** Collaborators of a {@link RuntimePolicy}; they never enter the fingerprint. */
export interface RuntimePolicyDeps {
  /** Source of `decided_at_ms` (its `wallNow`). @default the system clock */
  clock?: Clock;
  /** Receives one `agent_runtime.policy.decision` event per check. @default none */
  events?: TelemetrySink;
}

const INVALID_DESCRIPTION: InvalidRuntimePolicyDescription = Object.freeze({ schema_version: 1, status: 'invalid' });

/** Which check {@link screenCheck} runs: `'undeclared_tool'` is {@link RuntimePolicy.checkUndeclaredTool}. */
export type ScreenedCheck = 'agent' | 'tool' | 'undeclared_tool' | 'content';

const SCREENED: Readonly<Record<ScreenedCheck, PolicyCheck>> = Object.freeze({
  agent: AGENT_CHECK,
  tool: TOOL_CHECK,
  undeclared_tool: UNDECLARED_TOOL_CHECK,
  content: CONTENT_CHECK,
});

/**
 * Package-internal: one check of a compiled `policy` that builds the decision record only for a
 * denial. An allow answers `null` after emitting the same telemetry event, so a caller that records
 * only denials (the Runner, spec 03 §6.11) does not pay for an id, a canonical text and a digest
 * nobody reads. `approvedBy` (a confirmed tool call's approver) goes on a `'tool'` decision only.
 */
export let screenCheck: (policy: RuntimePolicy, check: ScreenedCheck, subject: unknown, value: unknown, approvedBy?: string) => PolicyDecision | null;

/** Only `compile` and `withDeps` hold it, so no other code can construct a policy. */
const CONSTRUCT = Symbol('RuntimePolicy.construct');

/**
 * An immutable, fail-closed allow/deny rule set for agents and tools with two byte budgets
 * (spec 02 §3–§6). Checks never throw: every call returns a deep-frozen, content-free
 * {@link PolicyDecision} and emits exactly one telemetry event.
 *
 * @example
 * const policy = RuntimePolicy.compile({ tools: { allow: ['search'] }, maxArgumentBytes: 4096 });
 * const decision = policy.checkTool('search', { query: 'weather' });
 * if (decision.outcome === 'deny') throw new Error(decision.reason);
 */
export class RuntimePolicy {
  readonly #spec: CompiledPolicySpec;
  readonly #clock: Clock;
  readonly #events: TelemetrySink | undefined;

  /** The configured id, or `'policy-'` + the first 16 hex digits of the fingerprint. */
  readonly id: string;
  /** Lowercase hex SHA-256 of the canonical rules and limits (never the id or the deps). */
  readonly fingerprint: string;
  readonly maxArgumentBytes: number;
  readonly maxContentBytes: number;

  private constructor(token: symbol, spec: CompiledPolicySpec, deps: RuntimePolicyDeps | undefined) {
    if (token !== CONSTRUCT) throw new RuntimePolicyError('invalid_runtime_policy');
    this.#spec = spec;
    this.#clock = deps?.clock ?? systemClock;
    this.#events = deps?.events;
    this.id = spec.id;
    this.fingerprint = spec.fingerprint;
    this.maxArgumentBytes = spec.maxArgumentBytes;
    this.maxContentBytes = spec.maxContentBytes;
    Object.freeze(this);
  }

  /**
   * Validates `spec` (spec 02 §3; the first failing rule throws its `RuntimePolicyError`) and returns
   * a frozen policy holding private copies: later changes to `spec` have no effect.
   */
  static compile(spec: RuntimePolicySpec, deps?: RuntimePolicyDeps): RuntimePolicy {
    return new RuntimePolicy(CONSTRUCT, compilePolicySpec(spec), deps);
  }

  /** Brand check (a private field), not a shape check: look-alike objects and Proxies are refused. */
  static isRuntimePolicy(value: unknown): value is RuntimePolicy {
    return typeof value === 'object' && value !== null && #spec in value;
  }

  /** The same rules, id and fingerprint bound to `deps` instead (they replace, not merge). */
  withDeps(deps?: RuntimePolicyDeps): RuntimePolicy {
    if (!RuntimePolicy.isRuntimePolicy(this)) throw new RuntimePolicyError('invalid_runtime_policy');
    return new RuntimePolicy(CONSTRUCT, this.#spec, deps);
  }

  /** The deep-frozen description of the rules; `{schema_version: 1, status: 'invalid'}` on a foreign receiver. */
  describe(): RuntimePolicyDescription | InvalidRuntimePolicyDescription {
    return RuntimePolicy.isRuntimePolicy(this) ? this.#spec.description : INVALID_DESCRIPTION;
  }

  /** May agent `agentId` run on `content`? Rules `agents`, budget `maxContentBytes` by `measureContent`. */
  checkAgent(agentId: unknown, content: unknown): PolicyDecision {
    if (!RuntimePolicy.isRuntimePolicy(this)) return invalidPolicyDecision(AGENT_CHECK, agentId);
    return this.#check(AGENT_CHECK, agentId, content);
  }

  /**
   * May tool `toolName` be called with `args`? Rules `tools`, budget `maxArgumentBytes` by `measure`.
   * `approvedBy`, the principal id of whoever confirmed the call, is recorded as the decision's
   * `approved_by` (it decides nothing); omitted, or not a valid id, it is `null`.
   */
  checkTool(toolName: unknown, args: unknown, approvedBy?: string): PolicyDecision {
    if (!RuntimePolicy.isRuntimePolicy(this)) return invalidPolicyDecision(TOOL_CHECK, toolName, approverOf(approvedBy));
    return this.#check(TOOL_CHECK, toolName, args, approverOf(approvedBy));
  }

  /**
   * {@link checkTool} for a name the caller did not declare, such as a tool name a model made up: the
   * same rules decide, but the decision records subject `'unknown_tool'` and `subject_digest` (a
   * SHA-256 prefix of the name) instead of the name, which is model content.
   *
   * @example
   * const decision = toolNames.has(call.name) ? policy.checkTool(call.name, call.args) : policy.checkUndeclaredTool(call.name, call.args);
   */
  checkUndeclaredTool(toolName: unknown, args: unknown): PolicyDecision {
    if (!RuntimePolicy.isRuntimePolicy(this)) return invalidPolicyDecision(UNDECLARED_TOOL_CHECK, toolName);
    return this.#check(UNDECLARED_TOOL_CHECK, toolName, args);
  }

  /** Is `content` under `subject` (e.g. `'model_output'`) within `maxContentBytes`? No allow-list. */
  checkContent(subject: unknown, content: unknown): PolicyDecision {
    if (!RuntimePolicy.isRuntimePolicy(this)) return invalidPolicyDecision(CONTENT_CHECK, subject);
    return this.#check(CONTENT_CHECK, subject, content);
  }

  static {
    screenCheck = (policy, check, subject, value, approvedBy) => policy.#screen(SCREENED[check], subject, value, check === 'tool' ? approverOf(approvedBy) : null);
  }

  #screen(check: PolicyCheck, subject: unknown, value: unknown, approvedBy: string | null): PolicyDecision | null {
    const spec = this.#spec;
    const verdict = evaluateCheck(check, spec, subject, value);
    if (verdict.reason !== 'allowed') {
      const decision = decide(check, verdict, approvedBy, spec.id, spec.fingerprint, limitOf(check, spec), this.#clock);
      if (this.#events !== undefined) emitSafely(this.#events, TelemetryEvents.policyDecision, eventOf(decision));
      return decision;
    }
    if (this.#events !== undefined) {
      emitSafely(this.#events, TelemetryEvents.policyDecision, {
        limit_bytes: limitOf(check, spec),
        ...(verdict.measuredBytes === null ? {} : { measured_bytes: verdict.measuredBytes }),
        policy_id: spec.id,
        operation: check.operation,
        outcome: 'allow',
        reason: 'allowed',
      });
    }
    return null;
  }

  #check(check: PolicyCheck, subject: unknown, value: unknown, approvedBy: string | null = null): PolicyDecision {
    const spec = this.#spec;
    const verdict = evaluateCheck(check, spec, subject, value);
    const decision = decide(check, verdict, approvedBy, spec.id, spec.fingerprint, limitOf(check, spec), this.#clock);
    if (this.#events !== undefined) emitSafely(this.#events, TelemetryEvents.policyDecision, eventOf(decision));
    return decision;
  }
}

/** A valid principal id as it is; anything else (omitted included) as `null`. */
function approverOf(approvedBy: unknown): string | null {
  return isValidId(approvedBy) ? approvedBy : null;
}

function decide(
  check: PolicyCheck,
  verdict: Verdict,
  approvedBy: string | null,
  policyId: string,
  fingerprint: string,
  limit: number,
  clock: Clock,
): PolicyDecision {
  return buildDecision(
    {
      policyId,
      policyFingerprint: fingerprint,
      operation: check.operation,
      subject: verdict.subject,
      subjectDigest: verdict.subjectDigest,
      approvedBy,
      reason: verdict.reason,
      budgetKind: check.budgetKind,
      measuredBytes: verdict.measuredBytes,
      limitBytes: limit,
    },
    clock,
  );
}

/** Step 1 of spec 02 §4: a receiver that is not a compiled policy has no deps, so no event is emitted. */
function invalidPolicyDecision(check: PolicyCheck, subject: unknown, approvedBy: string | null = null): PolicyDecision {
  const valid = isValidSubject(subject);
  const undeclared = valid && check.undeclared === true;
  const verdict: Verdict = {
    subject: undeclared ? UNKNOWN_TOOL_SUBJECT : valid ? subject : INVALID_SUBJECT,
    subjectDigest: undeclared ? undeclaredNameDigest(subject) : null,
    reason: 'invalid_policy',
    measuredBytes: null,
  };
  return decide(check, verdict, approvedBy, INVALID_POLICY_ID, INVALID_POLICY_FINGERPRINT, 0, systemClock);
}

function eventOf(decision: PolicyDecision): PolicyDecisionEvent {
  const { budget } = decision;
  return Object.freeze({
    limit_bytes: budget.limit_bytes,
    ...(budget.measured_bytes === null ? {} : { measured_bytes: budget.measured_bytes }),
    policy_id: decision.policy_id,
    operation: decision.operation,
    outcome: decision.outcome,
    reason: decision.reason,
  });
}
