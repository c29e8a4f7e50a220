import type { RunnerError } from '../../runner/runner.errors';
import { ModelCallReports } from '../../admission/model-call-reports';
import type { AdkEvent, InvocationContext } from './adk.types';
import type { AdkPolicyGuard } from './adk-policy-guard';

/**
 * One facade run, the per-invocation side table of spec 03 §11: the adapter-owned abort controller
 * ADK runs under, the first typed error a hook raised (ADK wraps plugin exceptions into text, so the
 * hook leaves it here and the facade rethrows it once ADK's generator has ended), and the audit
 * events stored during the run that the facade has not streamed yet.
 */
export class AdkInvocation {
  readonly controller = new AbortController();
  readonly pendingAudits: AdkEvent[] = [];
  readonly adkInvocationIds = new Set<string>();
  /** Reports ADK's model calls on the run's permit (spec 09 §6), timed from `beforeModelCallback`. */
  readonly modelReports = new ModelCallReports();
  /** When the model call in progress started (monotonic ms), for its latency. */
  modelCallStartedAt: number | null = null;
  #failure: RunnerError | null = null;
  #cancelReason: string | null = null;

  constructor(readonly guard: AdkPolicyGuard) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get failure(): RunnerError | null {
    return this.#failure;
  }

  /** Why the run was cancelled from outside (caller signal, consumer close), if it was. */
  get cancelReason(): string | null {
    return this.#cancelReason;
  }

  /** Records the run's typed error (the first one wins) and aborts ADK; returns the error to throw. */
  fail(error: RunnerError): RunnerError {
    if (this.#failure === null && this.#cancelReason === null) this.#failure = error;
    this.controller.abort('runtime_failure');
    return error;
  }

  cancel(reason: string): void {
    if (this.#failure === null && this.#cancelReason === null) this.#cancelReason = reason;
    this.controller.abort(reason);
  }
}

const bySignal = new WeakMap<AbortSignal, AdkInvocation>();
const byAdkId = new Map<string, AdkInvocation>();

/** Makes `invocation` findable from the ADK contexts that carry its signal. */
export function openInvocation(invocation: AdkInvocation): void {
  bySignal.set(invocation.signal, invocation);
}

/** Forgets `invocation` and the ADK invocation ids seen under it. */
export function closeInvocation(invocation: AdkInvocation): void {
  bySignal.delete(invocation.signal);
  for (const id of invocation.adkInvocationIds) byAdkId.delete(id);
  invocation.adkInvocationIds.clear();
}

/**
 * The facade run an ADK context belongs to (by the abort signal ADK was given, which ADK hands on to
 * every nested context, AgentTool runners included), remembering ADK's invocation id so the session
 * service, which only sees events, can find it too. `undefined` outside a facade run.
 */
export function invocationOf(context: InvocationContext | undefined): AdkInvocation | undefined {
  const signal = context?.abortSignal;
  const invocation = signal === undefined ? undefined : bySignal.get(signal);
  if (invocation !== undefined && typeof context?.invocationId === 'string' && !invocation.adkInvocationIds.has(context.invocationId)) {
    invocation.adkInvocationIds.add(context.invocationId);
    byAdkId.set(context.invocationId, invocation);
  }
  return invocation;
}

/** The facade run that ADK invocation id belongs to, once a plugin callback has seen it. */
export function invocationById(invocationId: unknown): AdkInvocation | undefined {
  return typeof invocationId === 'string' ? byAdkId.get(invocationId) : undefined;
}

/** Leaves `error` in the run's side table when there is a run; returns it for the caller to throw. */
export function failed(invocation: AdkInvocation | undefined, error: RunnerError): RunnerError {
  return invocation === undefined ? error : invocation.fail(error);
}
