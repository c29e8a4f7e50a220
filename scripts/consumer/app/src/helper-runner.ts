import type { Principal } from 'nest-agent-runtime/http';
import { RuntimePolicy } from 'nest-agent-runtime/policy';
import { Runner, ScriptedModel, type RunsModuleAsyncOptions, type Tool } from 'nest-agent-runtime/runner';
import { InMemorySessionService } from 'nest-agent-runtime/services';

/** A tool the scripted model calls once. */
const searchTool: Tool = {
  name: 'search',
  description: 'Searches the handbook.',
  parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'], additionalProperties: false },
  execute: (args) => ({ hits: [`handbook entry for ${String(args.query)}`] }),
};

/**
 * Who is asking: an app's auth guard would have put the user on the request; this demo app reads a
 * bearer token. Runs belong to the principal that starts them.
 */
function principalOf(request: unknown): Principal | null {
  const header = (request as { headers?: Record<string, unknown> }).headers?.authorization;
  return header === 'Bearer consumer-token' ? { id: 'consumer' } : null;
}

/**
 * The `helper` agent: a scripted model (no network) that calls `search` once and then answers,
 * under the app's runtime policy. One run uses the script once; the model is built per runner.
 */
export const helperRunsOptions: RunsModuleAsyncOptions = {
  inject: [RuntimePolicy],
  useFactory: (policy: RuntimePolicy) => ({
    runners: [
      new Runner({
        appName: 'consumer',
        agent: {
          name: 'helper',
          model: new ScriptedModel([{ toolCalls: [{ id: 'search-1', name: 'search', args: { query: 'runbook' } }] }, { text: 'The runbook is in the handbook.' }]),
          tools: [searchTool],
        },
        sessionService: new InMemorySessionService(),
        runtimePolicy: policy,
      }),
    ],
    resolvePrincipal: principalOf,
  }),
};
