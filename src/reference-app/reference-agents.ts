import type { Agent, Tool } from '../runner/agent.types';
import type { Model, ModelRequest, ModelResponse } from '../runner/models/model.types';
import { OpenAICompatibleModel } from '../runner/models/openai-compatible-model';
import { systemClock } from '../shared/time/clock';
import { sleep } from '../shared/time/timeout';

/**
 * A deterministic stand-in for a language model: the next response is a function of the history
 * alone (a tool turn after the user's message, a final text once every call was answered), so the
 * reference service needs no network and any number of runs behave alike.
 */
class DemoModel implements Model {
  constructor(
    readonly name: string,
    private readonly turn: (request: ModelRequest) => ModelResponse,
  ) {}

  async generate(request: ModelRequest): Promise<ModelResponse> {
    return this.turn(request);
  }
}

/** The text of the last user message of a request (empty for data parts). */
function lastUserText(request: ModelRequest): string {
  for (let index = request.contents.length - 1; index >= 0; index -= 1) {
    const entry = request.contents[index];
    if (entry.role === 'user') return entry.content.parts.map((part) => ('text' in part ? part.text : '')).join(' ');
  }
  return '';
}

/** True once the last history entry answers a tool call: the model's turn to conclude. */
const answered = (request: ModelRequest) => request.contents.at(-1)?.role === 'tool';

/** `search`: an allowed tool returning canned hits for a query. */
export const searchTool: Tool = {
  name: 'search',
  description: 'Searches the (canned) knowledge base.',
  parameters: { type: 'object', properties: { query: { type: 'string', maxLength: 200 } }, required: ['query'], additionalProperties: false },
  execute: (args) => ({ hits: [`About ${String(args.query)}: see the runbook, section 2.`] }),
};

/** `shell`: the reference policy denies it, so the model only ever sees its denial record. */
const shellTool: Tool = {
  name: 'shell',
  parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'], additionalProperties: false },
  execute: () => ({ exit_code: 0 }),
};

/** `deploy`: allowed, but every call waits for a human's confirmation. */
const deployTool: Tool = {
  name: 'deploy',
  description: 'Deploys a service.',
  parameters: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'], additionalProperties: false },
  requireConfirmation: true,
  confirmationHint: 'Deploys to production.',
  execute: (args, ctx) => ({ deployed: args.service, approved_note: ctx.confirmation?.payload ?? null }),
};

/** `helper`: searches for the user's message, then answers with the first hit. */
export const helperAgent: Agent = {
  name: 'helper',
  instruction: 'Answer with what the knowledge base says.',
  tools: [searchTool],
  model: new DemoModel('demo-helper', (request) =>
    answered(request) ? { text: 'Found it: see the runbook, section 2.' } : { toolCalls: [{ id: 'search-1', name: 'search', args: { query: lastUserText(request).slice(0, 200) } }] },
  ),
};

/**
 * `helper-draft`: a candidate rework of `helper` that answers without searching. It gives the same
 * answer, so `response_match` still passes, but it drops the `search` call the eval set expects: the
 * regression gate catches it on `tool_trajectory`.
 */
export const helperDraftAgent: Agent = {
  name: 'helper-draft',
  instruction: 'Answer from memory.',
  tools: [searchTool],
  model: new DemoModel('demo-helper-draft', () => ({ text: 'Found it: see the runbook, section 2.' })),
};

/** `operator`: asks for `shell` (denied by the policy) and `deploy` (needs a confirmation) in one turn. */
export const operatorAgent: Agent = {
  name: 'operator',
  instruction: 'Operate the platform.',
  tools: [shellTool, deployTool],
  model: new DemoModel('demo-operator', (request) =>
    answered(request)
      ? { text: 'Deploy finished; the shell command was refused by the runtime policy.' }
      : {
          toolCalls: [
            { id: 'shell-1', name: 'shell', args: { command: 'rm -rf /tmp/cache' } },
            { id: 'deploy-1', name: 'deploy', args: { service: 'api' } },
          ],
        },
  ),
};

/** `wait`: sleeps for `ms` (≤ 10 s), stopping early when the invocation is cancelled. */
const waitTool: Tool = {
  name: 'wait',
  description: 'Waits, as a slow tool does.',
  parameters: { type: 'object', properties: { ms: { type: 'integer', minimum: 0, maximum: 10_000 } }, required: ['ms'], additionalProperties: false },
  execute: async (args, ctx) => {
    await sleep(Number(args.ms), systemClock, ctx.signal);
    return { waited_ms: args.ms };
  },
};

/** How many `wait` steps `batch` takes, one after another. */
const BATCH_STEPS = 3;

/**
 * `batch`: three `wait` steps of 1.5 s each, one per model turn, then a summary. Slow on purpose, so
 * a durable run of it can be interrupted (kill an instance) and resumed elsewhere mid-way.
 */
export const batchAgent: Agent = {
  name: 'batch',
  tools: [waitTool],
  model: new DemoModel('demo-batch', (request) => {
    const done = request.contents.filter((entry) => entry.role === 'tool').length;
    return done < BATCH_STEPS ? { toolCalls: [{ id: `wait-${done + 1}`, name: 'wait', args: { ms: 1500 } }] } : { text: `Batch done: ${BATCH_STEPS} steps.` };
  }),
};

/**
 * `assistant`, backed by an OpenAI-compatible Chat Completions server, when `OPENAI_BASE_URL` and
 * `OPENAI_MODEL` are set (`OPENAI_API_KEY` is read by the model itself); else `null`.
 */
export function openAIAgent(env: NodeJS.ProcessEnv = process.env): Agent | null {
  if (!env.OPENAI_BASE_URL || !env.OPENAI_MODEL) return null;
  return {
    name: 'assistant',
    instruction: 'You are a helpful assistant. Use the search tool when the user asks about the runbook.',
    tools: [searchTool],
    model: new OpenAICompatibleModel({ baseUrl: env.OPENAI_BASE_URL, model: env.OPENAI_MODEL }),
  };
}
