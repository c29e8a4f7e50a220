import { denialError } from '../../runner/loop/event-recorder';
import { RunnerError } from '../../runner/runner.errors';
import type { BaseSessionService } from './adk.types';
import { hasMethods } from '../../runner/runner-options';
import { resolveGuardOptions, sharedPartsOf, type AdkGuardOptions } from './adk-guard-options';
import { failed, invocationById } from './adk-invocation';
import { loadAdk } from './adk-peer';
import { AdkPolicyGuard } from './adk-policy-guard';

type Service = BaseSessionService;

const SESSION_METHODS = ['createSession', 'getSession', 'listSessions', 'deleteSession', 'appendEvent'] as const;

/**
 * Options of {@link BudgetGuardSessionService}.
 *
 * @example
 * const options: BudgetGuardSessionServiceOptions = { runtimePolicy: { maxContentBytes: 32768 }, auditSink };
 */
export type BudgetGuardSessionServiceOptions = AdkGuardOptions;

// The merge gives instances ADK's `BaseSessionService` type while the class itself extends nothing,
// so this module loads without the peer (ADK 2.0 accepts any object with the session methods).
export interface BudgetGuardSessionService extends BaseSessionService {}

/**
 * Wraps the application's ADK session service (spec 03 §11): just before a user-authored event is
 * stored it rechecks `checkContent('agent_input', event.content)` on the message as it would be
 * stored — after every `onUserMessageCallback` replacement. A deny writes the audit event and throws
 * `runtime_policy_denied`, so nothing of that message is saved. Every other call is passed through;
 * a failure of the wrapped service becomes `session_store_failed {operation}` (its text never copied).
 *
 * ADK stores the user message *before* its `beforeRunCallback`, so the recheck covers
 * `onUserMessageCallback` replacements only (documented gap (a)).
 *
 * @example
 * const sessionService = new BudgetGuardSessionService(new InMemorySessionService(), { runtimePolicy: policy, auditSink });
 * const runner = new Runner({ appName: 'weather', agent, sessionService, plugins: [safety] });
 */
export class BudgetGuardSessionService {
  readonly #inner: Service;
  readonly #guard: AdkPolicyGuard;

  /**
   * @param inner the application's ADK session service (anything with ADK's session methods)
   * @throws AdkAdapterError without the `@google/adk` peer
   * @throws RunnerError `invalid_runner_options {field}`, `invalid_runner_runtime_policy {reason}`
   */
  constructor(inner: BaseSessionService, options: BudgetGuardSessionServiceOptions) {
    loadAdk();
    if (!hasMethods(SESSION_METHODS)(inner)) throw new RunnerError('invalid_runner_options', { field: 'sessionService' });
    this.#inner = inner;
    this.#guard = sharedPartsOf(options)?.guard ?? resolveGuardOptions(options, {}).guard;
  }

  createSession(request: Parameters<Service['createSession']>[0]): ReturnType<Service['createSession']> {
    return this.#call('create_session', () => this.#inner.createSession(request));
  }

  getSession(request: Parameters<Service['getSession']>[0]): ReturnType<Service['getSession']> {
    return this.#call('get_session', () => this.#inner.getSession(request));
  }

  listSessions(request: Parameters<Service['listSessions']>[0]): ReturnType<Service['listSessions']> {
    return this.#call('list_sessions', () => this.#inner.listSessions(request));
  }

  deleteSession(request: Parameters<Service['deleteSession']>[0]): ReturnType<Service['deleteSession']> {
    return this.#call('delete_session', () => this.#inner.deleteSession(request));
  }

  async getOrCreateSession(request: Parameters<Service['getOrCreateSession']>[0]): ReturnType<Service['getOrCreateSession']> {
    if (request.sessionId !== undefined) {
      const found = await this.getSession({ appName: request.appName, userId: request.userId, sessionId: request.sessionId });
      if (found !== undefined) return found;
    }
    return this.createSession(request);
  }

  async appendEvent(request: Parameters<Service['appendEvent']>[0]): ReturnType<Service['appendEvent']> {
    const { session, event } = request;
    if (event.author === 'user' && event.partial !== true) {
      const denied = this.#guard.screen('content', 'agent_input', event.content);
      if (denied !== null) {
        const invocation = invocationById(event.invocationId);
        try {
          await this.#guard.recordDenial({ sessionService: this.#inner, session, invocationId: event.invocationId }, denied, invocation);
        } catch (error) {
          throw failed(invocation, error as RunnerError);
        }
        throw failed(invocation, denialError(denied));
      }
    }
    return this.#call('append_event', () => this.#inner.appendEvent(request));
  }

  async #call<T>(operation: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (RunnerError.isRunnerError(error)) throw error;
      throw new RunnerError('session_store_failed', { operation });
    }
  }
}
