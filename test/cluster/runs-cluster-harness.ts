import type { DataSource } from 'typeorm';
import { ClusterInstance } from '../../src/cluster/cluster-instance';
import { PostgresRunStore } from '../../src/runner/runs/stores/postgres/postgres-run-store';
import { InvocationLedger } from '../../src/ledger/invocation-ledger';
import type { Agent, Tool } from '../../src/runner/agent.types';
import { PostgresSessionService } from '../../src/services/sessions/postgres-session-service';
import { Runner } from '../../src/runner/runner';
import { RunRegistry } from '../../src/runner/runs/run-registry';
import type { RunRegistryOptions } from '../../src/runner/runs/run-registry-options';
import type { RunStreamItem } from '../../src/runner/runs/run-registry.types';
import type { DatabaseHarness } from '../support/database-harness';

export const APP = 'cluster-runs';
export const AGENT = 'stepper';

/** One app instance: its own pool, cluster instance, run store, session service, optional ledger, runner and registry. */
export interface AppInstance {
  readonly dataSource: DataSource;
  readonly instance: ClusterInstance;
  readonly store: PostgresRunStore;
  readonly sessions: PostgresSessionService;
  readonly ledger: InvocationLedger | null;
  readonly runner: Runner;
  readonly registry: RunRegistry;
  /** Shuts the registry down, then stops the store, the ledger and the cluster instance. */
  stop(): Promise<void>;
}

export interface AppInstanceOptions {
  readonly agent: Agent;
  /** A URL standing in for this host's network (a TCP proxy). @default the harness database */
  readonly url?: string;
  readonly durable?: boolean;
  readonly registry?: Partial<RunRegistryOptions>;
}

/** Starts one instance named `instanceId` on the harness database. */
export async function startInstance(harness: DatabaseHarness, instanceId: string, options: AppInstanceOptions): Promise<AppInstance> {
  const dataSource = await harness.dataSource({}, options.url);
  const instance = new ClusterInstance({ dataSource, instanceId, backoff: { initialMs: 50, maxMs: 200 } });
  await instance.start();
  const store = new PostgresRunStore({ instance, pollIntervalMs: 50 });
  await store.start();
  const sessions = new PostgresSessionService(dataSource);
  await sessions.start();
  let ledger: InvocationLedger | null = null;
  if (options.durable) {
    ledger = new InvocationLedger(dataSource, { instanceId, defaultLeaseMs: 1500 });
    await ledger.start();
  }
  const runner = new Runner({ appName: APP, agent: options.agent, sessionService: sessions, ...(ledger ? { ledger } : {}) });
  const registry = new RunRegistry({ runners: [runner], store, shutdownGraceMs: 500, ...options.registry });
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      await registry.shutdown().catch(() => undefined);
      await store.stop().catch(() => undefined);
      await ledger?.close().catch(() => undefined);
      await sessions.close().catch(() => undefined);
      await instance.stop().catch(() => undefined);
    })());
  harness.track(stop);
  return { dataSource, instance, store, sessions, ledger, runner, registry, stop };
}

/** Every item of a run, read from `registry` after `afterSeq` up to its terminal item. */
export async function collect(registry: RunRegistry, runId: string, afterSeq = 0): Promise<RunStreamItem[]> {
  const items: RunStreamItem[] = [];
  for await (const item of registry.subscribe(runId, { afterSeq })) items.push(item);
  return items;
}

/** A tool `step` counting its executions by call id; `onStart` may hold it (it gets the tool's signal). */
export function stepTool(executed: string[], onStart: (callId: string, signal: AbortSignal) => Promise<void> = async () => undefined, extra: Partial<Tool> = {}): Tool {
  return {
    name: 'step',
    parameters: { type: 'object', properties: { n: { type: 'string' } }, required: ['n'], additionalProperties: false },
    async execute(args, ctx) {
      executed.push(ctx.callId);
      await onStart(ctx.callId, ctx.signal);
      return { done: args.n };
    },
    ...extra,
  };
}

/** Resolves once `signal` aborts. */
export function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
}

/** `count` tool-call turns of one call each, then a final text. */
export function steps(count: number, prefix = 's'): Array<{ toolCalls: Array<{ id: string; name: string; args: { n: string } }> }> {
  return Array.from({ length: count }, (_, index) => ({ toolCalls: [{ id: `${prefix}${index + 1}`, name: 'step', args: { n: `${prefix}${index + 1}` } }] }));
}
