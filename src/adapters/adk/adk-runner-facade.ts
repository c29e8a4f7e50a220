import type { Runner } from '@google/adk';
import type { Permit } from '../../admission/permit';
import { canonicalJson } from '../../json/canonical-json';
import { denialError } from '../../runner/loop/event-recorder';
import { cancelReasonOf } from '../../runner/invocation/invocation-scope';
import { admissionFailedError, invocationRequest } from '../../runner/invocation/invocation-admission';
import { RunnerError } from '../../runner/runner.errors';
import { logField } from '../../shared/text/log-escape';
import type { AdkContent, AdkEvent } from './adk.types';
import { resolveFacadeOptions, type AdkRunnerFacadeOptions, type ResolvedFacadeOptions } from './adk-facade-options';
import { sharedOptions } from './adk-guard-options';
import { AdkInvocation, closeInvocation, openInvocation } from './adk-invocation';
import { loadAdk } from './adk-peer';
import { AdkPolicyGuard } from './adk-policy-guard';
import { validateAdkRunRequest, type AdkRunRequest, type ValidAdkRunRequest } from './adk-run-request';
import { AdkSafetyPlugin } from './adk-safety-plugin';
import { installAgentGuards } from './agent-guards';
import { BudgetGuardSessionService } from './budget-guard-session-service';

/**
 * Runs an ADK agent under the package's ordering contract (spec 03 §11). The facade builds ADK's
 * `Runner` itself — with a {@link BudgetGuardSessionService} around the application's session
 * service, the {@link AdkSafetyPlugin} as ADK's only plugin (wrapping the application's plugins) and
 * {@link installAgentGuards} on the sub-agents — so the order cannot be bypassed:
 *
 * 1. admission (`acquire(agent.name)` with the facade's own abort signal as owner);
 * 2. `checkAgent(agent.name, newMessage)` on the message exactly as given, before any ADK code runs:
 *    on deny the decision goes to the audit sink (there is no ADK session write yet), the model is
 *    never called and the session gets nothing;
 * 3. ADK's `runAsync` under that adapter-owned signal, each stored event yielded, the audit events of
 *    denials streamed before the event that follows them;
 * 4. in `finally`, on every path (completion, throw, consumer `return`, abort): ADK's generator is
 *    closed, the signal aborted and the permit released.
 *
 * Typed errors raised in ADK hooks (a denied final output, a failed audit write, a throwing
 * application plugin) are kept in a per-invocation side table, since ADK wraps plugin exceptions into
 * text, and rethrown as `RunnerError` once ADK's generator has ended. A caller's abort ends the run
 * with `cancelled {reason}`; any other exception out of ADK becomes `plugin_failed {hook: 'adk_run',
 * plugin: 'adk'}`, its text never copied.
 *
 * @example
 * const facade = new AdkRunnerFacade({
 *   appName: 'weather',
 *   agent: new LlmAgent({ name: 'forecaster', model: 'gemini-2.5-flash', tools: [getWeather] }),
 *   sessionService: new InMemorySessionService(),
 *   admission: { controller: new AdmissionController({ globalLimit: 8 }) },
 *   runtimePolicy: { agents: { allow: ['forecaster'] }, tools: { allow: ['get_weather'] }, maxContentBytes: 65536 },
 *   auditSink,
 * });
 * for await (const event of facade.runAsync({ userId: 'u1', sessionId: 's1', newMessage: { role: 'user', parts: [{ text: 'Rain in Oslo?' }] } })) {
 *   console.log(event.author, event.content);
 * }
 */
export class AdkRunnerFacade {
  /** ADK's app name of every run. */
  readonly appName: string;
  /** The application's session service behind the budget guard: read the sessions through it. */
  readonly sessionService: BudgetGuardSessionService;
  readonly #options: ResolvedFacadeOptions;
  readonly #guard: AdkPolicyGuard;
  readonly #runner: Runner;

  /**
   * Validates synchronously.
   * @throws AdkAdapterError without the `@google/adk` peer (`adk_peer_missing`) or with another version (`adk_peer_unsupported`)
   * @throws RunnerError `invalid_runner_options {field}`, `invalid_runner_admission_control {field}`, `invalid_runner_runtime_policy {reason}`
   */
  constructor(options: AdkRunnerFacadeOptions) {
    const adk = loadAdk();
    const resolved = resolveFacadeOptions(adk, options);
    this.#options = resolved;
    this.appName = resolved.appName;
    this.#guard = new AdkPolicyGuard(resolved.policy, resolved.auditSink);
    const shared = { guard: this.#guard, plugins: resolved.plugins };
    this.sessionService = new BudgetGuardSessionService(resolved.sessionService, sharedOptions(shared));
    if (resolved.policy !== null) installAgentGuards(resolved.agent, sharedOptions(shared));
    try {
      this.#runner = new adk.Runner({
        appName: resolved.appName,
        agent: resolved.agent,
        sessionService: this.sessionService,
        plugins: [new AdkSafetyPlugin(sharedOptions(shared))],
        artifactService: resolved.artifactService,
        memoryService: resolved.memoryService,
        credentialService: resolved.credentialService,
      });
    } catch {
      throw new RunnerError('invalid_runner_options', { field: 'agent' });
    }
  }

  /**
   * One run: yields every event ADK stores (and the audit events of denials) and ends when ADK does.
   * Breaking out of the loop cancels the run. Validation, admission and the agent check happen on
   * the first `next()`.
   *
   * @example
   * const controller = new AbortController();
   * for await (const event of facade.runAsync({ userId, sessionId, newMessage, signal: controller.signal })) render(event);
   * @throws RunnerError `invalid_run_request {field}`, `admission_failed {reason}`, `runtime_policy_denied` (the five-key
   *   summary), `runtime_policy_audit_persistence_failed {target}`, `session_store_failed {operation}`,
   *   `plugin_failed {hook, plugin}`, `cancelled {reason}`
   */
  runAsync(request: AdkRunRequest): AsyncGenerator<AdkEvent, void, undefined> {
    return this.#run(request);
  }

  /**
   * Drains {@link runAsync} and returns the events it yielded.
   *
   * @example
   * const events = await facade.run({ userId: 'u1', sessionId: 's1', newMessage: { role: 'user', parts: [{ text: 'hi' }] } });
   */
  async run(request: AdkRunRequest): Promise<readonly AdkEvent[]> {
    const events: AdkEvent[] = [];
    for await (const event of this.runAsync(request)) events.push(event);
    return Object.freeze(events);
  }

  async *#run(request: unknown): AsyncGenerator<AdkEvent, void, undefined> {
    const valid = validateAdkRunRequest(request);
    const invocation = new AdkInvocation(this.#guard);
    const signal = valid.signal;
    const onAbort = () => invocation.cancel(cancelReasonOf(signal?.reason));
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    let permit: Permit | null = null;
    let events: AsyncGenerator<AdkEvent, void, undefined> | null = null;
    let adkEnded = false;
    let settled = false;
    try {
      permit = await this.#admit(invocation, valid);
      const denied = this.#guard.screen('agent', this.#options.agent.name, valid.newMessage);
      if (denied !== null) {
        await this.#guard.recordToSink(denied);
        throw denialError(denied);
      }
      const newMessage = copyOf(valid.newMessage);
      await this.#ensureSession(valid, invocation);
      throwIfCancelled(invocation);
      openInvocation(invocation);
      const { userId, sessionId, stateDelta, runConfig } = valid;
      events = this.#runner.runAsync({ userId, sessionId, newMessage, stateDelta, runConfig, abortSignal: invocation.signal });
      for (;;) {
        let next: IteratorResult<AdkEvent, void>;
        try {
          next = await events.next();
        } catch (error) {
          adkEnded = true;
          yield* takeAudits(invocation);
          throw failureOf(invocation, error);
        }
        adkEnded = next.done === true;
        yield* takeAudits(invocation);
        if (invocation.failure !== null) throw invocation.failure;
        if (next.done === true) break;
        yield next.value;
      }
      throwIfCancelled(invocation);
      settled = true;
    } catch (error) {
      settled = true;
      throw error;
    } finally {
      // a consumer that stopped iterating ends the run as a cancellation, before ADK is closed
      if (!settled) invocation.cancel('consumer_closed');
      else invocation.controller.abort('invocation_ended');
      if (events !== null && !adkEnded) await events.return(undefined).catch(() => undefined);
      closeInvocation(invocation);
      signal?.removeEventListener('abort', onAbort);
      if (permit !== null) {
        invocation.modelReports.finish();
        await this.#release(permit);
      }
    }
  }

  /** Step 1: admission with the facade's signal as owner; an abort meanwhile is a cancellation. */
  async #admit(invocation: AdkInvocation, request: ValidAdkRunRequest): Promise<Permit | null> {
    throwIfCancelled(invocation);
    const admission = this.#options.admission;
    if (admission === null) return null;
    try {
      const agent = this.#options.agent.name;
      const permit = await admission.controller.acquire(agent, invocationRequest(admission, invocation.signal, { agent, userId: request.userId, sessionId: request.sessionId }));
      invocation.modelReports.attach(permit);
      return permit;
    } catch (error) {
      throwIfCancelled(invocation);
      throw admissionFailedError(error);
    }
  }

  /** Fetches the session, or creates it with the given id (ADK's Runner requires one to exist). */
  async #ensureSession(request: ValidAdkRunRequest, invocation: AdkInvocation): Promise<void> {
    const key = { appName: this.appName, userId: request.userId, sessionId: request.sessionId };
    throwIfCancelled(invocation);
    if ((await this.sessionService.getSession(key)) !== undefined) return;
    throwIfCancelled(invocation);
    await this.sessionService.createSession(key);
  }

  async #release(permit: Permit): Promise<void> {
    try {
      await this.#options.admission?.controller.release(permit);
    } catch {
      this.#options.logger?.warn(`AdkRunnerFacade: admission release failed for agent=${logField(this.#options.agent.name)} (ignored)`);
    }
  }
}

/** ADK sets `role` on the message it is given; it gets a JSON copy, never the caller's object. */
function copyOf(message: AdkContent): AdkContent {
  try {
    return JSON.parse(canonicalJson(message)) as AdkContent;
  } catch {
    throw new RunnerError('invalid_run_request', { field: 'new_message' });
  }
}

function throwIfCancelled(invocation: AdkInvocation): void {
  const reason = invocation.cancelReason;
  if (reason !== null) throw new RunnerError('cancelled', { reason });
}

/** The audit events stored since the last event, in the order they were stored. */
function* takeAudits(invocation: AdkInvocation): Generator<AdkEvent, void, undefined> {
  while (invocation.pendingAudits.length > 0) yield invocation.pendingAudits.shift() as AdkEvent;
}

/** What a throw out of ADK is reported as: the side table's error first, else the run's end. */
function failureOf(invocation: AdkInvocation, error: unknown): RunnerError {
  if (invocation.failure !== null) return invocation.failure;
  if (invocation.cancelReason !== null) return new RunnerError('cancelled', { reason: invocation.cancelReason });
  if (RunnerError.isRunnerError(error)) return error;
  return new RunnerError('plugin_failed', { hook: 'adk_run', plugin: 'adk' });
}
