import { checkPolicy } from '../loop/policy-gate';
import type { ReadonlyContext } from '../agent.types';
import type { Content, JsonValue } from '../content.types';
import { DurableRecord } from '../durable/durable-record';
import { applyEventCallbacks, denialError, draftEvent, recordDenial, storeEvent } from '../loop/event-recorder';
import { concludeLoop, storeFinalOutput } from '../loop/final-output';
import { linksOf, runChain } from '../loop/hook-chain';
import { historyOf } from '../loop/history';
import type { InvocationBody } from './invocation-lifecycle';
import type { InvocationScope } from './invocation-scope';
import { contentOrNull, userContent } from '../loop/message';
import { runAgentLoop } from '../loop/agent-loop';
import { RunnerError } from '../runner.errors';
import type { RunResult } from '../runner.types';
import type { SessionRecord } from '../session.types';

/**
 * Steps 2–8 of a new invocation (spec 03 §6.2–6.8) after admission: the session, the agent check
 * on the message as supplied, the lifecycle hooks, the effective-input recheck, the stored user
 * message, the model loop and its conclusion.
 */
export function startBody(scope: InvocationScope, message: unknown, durable: boolean, onAdmitted: InvocationBody['onAdmitted']): InvocationBody {
  const { options } = scope;
  return {
    onAdmitted,
    afterAdmission: durable ? async () => void (scope.durable = await DurableRecord.open(options.ledger!, scope, options.root.name)) : undefined,
    run: async (hooksStarted) => {
      const session = await ensureSession(scope);
      scope.useState(session.state);
      const policy = options.policy;
      if (policy !== null) {
        const checked = checkPolicy(scope, 'agent', options.root.name, message);
        scope.spans.policy('agent_invocation', checked);
        if (checked !== null) {
          await recordDenial(scope, checked);
          throw denialError(checked);
        }
      }
      hooksStarted();
      const ctx = scope.context(options.root.name);
      const original = userContent(message) as Content;
      const replaced = await replacedMessage(scope, ctx, original);
      const output = await runChain('before_run', linksOf<{ ctx: ReadonlyContext }, unknown>(options.plugins, 'beforeRunCallback'), { ctx }, scope);
      const event = await applyEventCallbacks(scope, options.root.name, draftEvent(scope, 'user', 'user_message', (replaced ?? original) as unknown as JsonValue));
      if (policy !== null) {
        // measured like the agent check while nothing changed the message, else as canonical JSON
        const unchanged = replaced === undefined && event.content === (original as unknown as JsonValue);
        const checked = checkPolicy(scope, 'content', 'agent_input', unchanged ? message : event.content);
        scope.spans.policy('content', checked);
        if (checked !== null) {
          await recordDenial(scope, checked);
          throw denialError(checked);
        }
      }
      const events = await scope.session('list_events', () => options.sessionService.listEvents(scope.ref));
      await storeEvent(scope, event);
      if (output !== undefined) {
        const content = contentOrNull(output.value);
        if (content === null) throw new RunnerError('plugin_failed', { hook: 'before_run', plugin: output.owner });
        return storeFinalOutput(scope, { ...content, role: 'model' });
      }
      const history = historyOf(events, options.root.name);
      history.push({ role: 'user', content: event.content as unknown as Content });
      return concludeLoop(scope, await runAgentLoop(scope, options.root, history, false));
    },
  };
}

async function replacedMessage(scope: InvocationScope, ctx: ReadonlyContext, original: Content): Promise<Content | undefined> {
  const links = linksOf<{ ctx: ReadonlyContext; userMessage: Content }, unknown>(scope.options.plugins, 'onUserMessageCallback');
  const produced = await runChain('on_user_message', links, { ctx, userMessage: original }, scope);
  if (produced === undefined) return undefined;
  const content = contentOrNull(produced.value, 'user');
  if (content === null) throw new RunnerError('plugin_failed', { hook: 'on_user_message', plugin: produced.owner });
  return content;
}

/** Fetches the session, or creates it with the given id; another user's session is `session_not_found`. */
async function ensureSession(scope: InvocationScope): Promise<SessionRecord> {
  const { sessionService, appName } = scope.options;
  const found = await scope.session('get_session', () => sessionService.getSession(scope.ref));
  if (found !== undefined) return found;
  try {
    return await scope.session('create_session', () => sessionService.createSession({ appName, userId: scope.ref.userId, sessionId: scope.ref.sessionId }));
  } catch (error) {
    if (RunnerError.isRunnerError(error) && error.code === 'session_state_conflict') throw new RunnerError('session_not_found', {});
    throw error;
  }
}

export type { RunResult };
