import type { DataSource } from 'typeorm';
import { rejected } from '../../src/shared/testing/rejected';
import type { EvalStore } from '../../src/evaluation/eval.types';
import { EvalService, type EvalServiceDeps } from '../../src/evaluation/service/eval-service';
import type { EvalServiceOptions } from '../../src/evaluation/service/eval-service-options';
import { PostgresEvalStore } from '../../src/evaluation/store/postgres-eval-store';
import type { Agent, Tool } from '../../src/runner/agent.types';
import { InMemorySessionService } from '../../src/services/sessions/in-memory-session-service';
import type { Model, ModelRequest, ModelResponse } from '../../src/runner/models/model.types';
import { RunRegistry } from '../../src/runner/runs/run-registry';
import { Runner } from '../../src/runner/runner';
import { openDatabaseHarness, type DatabaseHarness } from './database-harness';
import type { FreshDatabase } from './fresh-database';

/** A model whose next answer is a function of the request alone, like the reference service's demo models. */
class FunctionModel implements Model {
  constructor(
    readonly name: string,
    private readonly turn: (request: ModelRequest, signal: AbortSignal) => ModelResponse | Promise<ModelResponse>,
  ) {}

  async generate(request: ModelRequest, signal: AbortSignal): Promise<ModelResponse> {
    return this.turn(request, signal);
  }
}

const lastUserText = (request: ModelRequest): string => {
  const entry = [...request.contents].reverse().find((item) => item.role === 'user');
  return entry && entry.role === 'user' ? entry.content.parts.map((part) => ('text' in part ? part.text : '')).join(' ') : '';
};
const answered = (request: ModelRequest) => request.contents.at(-1)?.role === 'tool';

const lookup: Tool = {
  name: 'lookup',
  parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false },
  execute: (args) => ({ found: String(args.q).length }),
};

/** Calls `lookup {q: <input>}`, then answers `The answer is 42.` */
const good: Agent = {
  name: 'good',
  tools: [lookup],
  model: new FunctionModel('good', (request) => (answered(request) ? { text: 'The answer is 42.' } : { toolCalls: [{ name: 'lookup', args: { q: lastUserText(request) } }] })),
};

/** Answers something else, without any tool. */
const bad: Agent = { name: 'bad', tools: [lookup], model: new FunctionModel('bad', () => ({ text: 'No idea, sorry.' })) };

/** Never answers: waits until its signal aborts (counts the calls and the aborts it saw). */
export const slowModel = { calls: 0, aborts: 0 };
const slow: Agent = {
  name: 'slow',
  tools: [lookup],
  model: new FunctionModel(
    'slow',
    (_request, signal) =>
      new Promise<ModelResponse>((_resolve, reject) => {
        slowModel.calls += 1;
        signal.addEventListener('abort', () => {
          slowModel.aborts += 1;
          reject(signal.reason);
        }, { once: true });
      }),
  ),
};

/** A registry with the agents `good`, `bad` and `slow` on in-memory sessions (the store under test is the eval store). */
export function evalRegistry(): { registry: RunRegistry; sessions: InMemorySessionService } {
  const sessions = new InMemorySessionService();
  const runners = [good, bad, slow].map((agent) => new Runner({ appName: 'eval-tests', agent, sessionService: sessions }));
  return { registry: new RunRegistry({ runners }), sessions };
}

/** A request for agent `agent` over `cases` cases that `good` passes. */
export function evalRequest(agent: string, options: { setId?: string; version?: string; cases?: number; metadata?: Record<string, unknown>; caseTimeoutMs?: number } = {}) {
  const cases = Array.from({ length: options.cases ?? 2 }, (_, index) => ({
    case_id: `case-${index}`,
    input: `question ${index}`,
    expected_output: 'The answer is 42.',
    expected_tool_calls: [{ name: 'lookup', args: { q: `question ${index}` } }],
  }));
  return {
    set: { id: options.setId ?? 'set-a', version: options.version ?? '1', cases },
    agent,
    metrics: [{ name: 'response_match' }, { name: 'tool_trajectory' }],
    ...(options.metadata ? { metadata: options.metadata } : {}),
    ...(options.caseTimeoutMs ? { options: { case_timeout_ms: options.caseTimeoutMs } } : {}),
  };
}

/** A fresh migrated database, and the services built on it (stopped with it). */
export class EvalServiceHarness {
  readonly registry = evalRegistry();

  private constructor(private readonly base: DatabaseHarness) {}

  static async create(): Promise<EvalServiceHarness> {
    return new EvalServiceHarness(await openDatabaseHarness());
  }

  get database(): FreshDatabase {
    return this.base.database;
  }

  dataSource(): Promise<DataSource> {
    return this.base.dataSource();
  }

  /** A service (not started) on its own DataSource; `wrap` decorates the Postgres store. */
  async service(options: EvalServiceOptions = {}, wrap?: (store: PostgresEvalStore) => EvalStore, deps: Partial<EvalServiceDeps> = {}): Promise<EvalService> {
    return this.track(new EvalService({ store: this.wrapped(new PostgresEvalStore(await this.dataSource()), wrap), registry: this.registry.registry, ...deps }, { preparation: { threads: 1 }, ...options }));
  }

  async started(options: EvalServiceOptions = {}, wrap?: (store: PostgresEvalStore) => EvalStore): Promise<EvalService> {
    const service = await this.service(options, wrap);
    await service.start();
    return service;
  }

  /** Stops `service` with the harness. */
  track(service: EvalService): EvalService {
    this.base.track(() => service.stop());
    return service;
  }

  /** One SQL statement on the harness database. */
  sql(text: string, values: unknown[] = []): Promise<Array<Record<string, unknown>>> {
    return this.base.sql(text, values);
  }

  close(): Promise<void> {
    return this.base.close();
  }

  private wrapped(store: PostgresEvalStore, wrap?: (store: PostgresEvalStore) => EvalStore): EvalStore {
    return wrap ? wrap(store) : store;
  }
}

/** Polls `check` every 20 ms until it returns a value other than `undefined` (or `timeoutMs` passes). */
export async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** What `work` rejects with; fails when it resolves. */
export const rejection = (work: Promise<unknown>): Promise<unknown> => rejected(work);
