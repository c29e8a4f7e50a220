import type { PolicyDecision } from '../../policy/runtime-policy.types';
import { handled } from '../../shared/async/handled-promise';
import { readOwnData } from '../../shared/options/option-reader';
import type { PolicyGuard } from './policy-guard';

/** The policy's answer to one tool call, and the audit write of a denial. */
export interface CallVerdict {
  readonly decision: PolicyDecision;
  /** Resolves once a denial is in the audit sink (at once for an allow); rejects with `runtime_policy_audit_persistence_failed`. */
  readonly recorded: Promise<void>;
}

interface Remembered {
  readonly input: unknown;
  readonly verdict: CallVerdict;
}

/** What the AI SDK passes to a tool's hooks, read without running any code of the object. */
export interface CallFacts {
  readonly messages: object | undefined;
  readonly toolCallId: string | undefined;
  readonly input: unknown;
}

/** Reads `messages`, `toolCallId` and `input` of a hook's options; anything unreadable is absent. */
export function callFacts(options: unknown): CallFacts {
  const own = readOwnData(options, ['messages', 'toolCallId', 'input']);
  const messages = own?.values.messages;
  const toolCallId = own?.values.toolCallId;
  return {
    messages: typeof messages === 'object' && messages !== null ? messages : undefined,
    toolCallId: typeof toolCallId === 'string' ? toolCallId : undefined,
    input: own?.values.input,
  };
}

const RESOLVED: Promise<void> = Promise.resolve();

/**
 * One decision per tool call. The AI SDK calls a tool's `onInputAvailable`, `needsApproval` and
 * `execute` in that order with the same step `messages` array, call id and input, so the first of them
 * decides and the others reuse its verdict: one decision and at most one audit write per call. The
 * verdicts hang off the step's messages array in a `WeakMap`, so they go when the step goes. A call
 * executed in a later step (after a human approval) is checked again, against the policy of that
 * moment, as the Runner does on resume (spec 03 §7).
 */
export class ToolCallVerdicts {
  readonly #steps = new WeakMap<object, Map<string, Remembered>>();

  constructor(private readonly guard: PolicyGuard) {}

  /** The verdict on `name(input)`: the one already made for this call in this step, or a new one. */
  verdictOf(name: string, input: unknown, facts: CallFacts): CallVerdict {
    const calls = facts.messages === undefined || facts.toolCallId === undefined ? undefined : this.#callsOf(facts.messages);
    const known = calls?.get(facts.toolCallId as string);
    if (known !== undefined && known.input === input) return known.verdict;
    const verdict = this.#decide(name, input);
    calls?.set(facts.toolCallId as string, { input, verdict });
    return verdict;
  }

  /** Like {@link verdictOf}, and forgets the call: `execute` is the last hook of a call. */
  take(name: string, input: unknown, facts: CallFacts): CallVerdict {
    const verdict = this.verdictOf(name, input, facts);
    if (facts.messages !== undefined && facts.toolCallId !== undefined) this.#steps.get(facts.messages)?.delete(facts.toolCallId);
    return verdict;
  }

  #callsOf(messages: object): Map<string, Remembered> {
    let calls = this.#steps.get(messages);
    if (calls === undefined) {
      calls = new Map();
      this.#steps.set(messages, calls);
    }
    return calls;
  }

  #decide(name: string, input: unknown): CallVerdict {
    const decision = this.guard.decide('tool', name, input);
    return { decision, recorded: decision.outcome === 'deny' ? handled(this.guard.recordDenial(decision)) : RESOLVED };
  }
}
