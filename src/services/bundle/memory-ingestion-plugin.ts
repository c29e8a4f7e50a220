import type { ReadonlyContext, RunnerPlugin } from '../../runner/agent.types';
import type { SessionEvent, SessionService } from '../../runner/session.types';
import { RuntimeServiceError } from '../runtime-service.errors';
import type { MemoryService } from '../services.types';

/** Name of the bundle's ingestion plugin (spec 07 §5). */
export const MEMORY_INGESTION_PLUGIN = 'agent_runtime_memory_ingestion';

/** Where the plugin sends an invocation's events: the memory service (ephemeral) or the outbox (durable). */
export type IngestionSink =
  | { readonly mode: 'direct'; readonly memory: MemoryService }
  | {
      readonly mode: 'outbox';
      /** False once the generation that owns the outbox stopped. */
      available(): boolean;
      enqueue(job: { appName: string; userId: string; baseJobId: string; events: readonly SessionEvent[] }): Promise<unknown>;
    };

const INGESTED_KINDS = new Set(['user_message', 'final_output']);

/**
 * The plugin that ingests each finished invocation's `user_message` and `final_output` events
 * (`afterRunCallback`). Durable: one outbox job whose base id `<session id>:<first event id>:<last
 * event id>` makes a repeated enqueue idempotent. Once the generation stopped it fails with
 * `memory_outbox_runtime_required`. A failure is the Runner's to log and ignore: the run's result
 * never depends on it.
 */
export function memoryIngestionPlugin(sessions: SessionService, sink: IngestionSink): RunnerPlugin {
  return Object.freeze({
    name: MEMORY_INGESTION_PLUGIN,
    async afterRunCallback({ ctx }: { readonly ctx: ReadonlyContext }): Promise<void> {
      if (sink.mode === 'outbox' && !sink.available()) throw new RuntimeServiceError('memory_outbox_runtime_required');
      const ref = { appName: ctx.appName, userId: ctx.userId, sessionId: ctx.sessionId };
      const events = (await sessions.listEvents(ref)).filter((event) => event.invocation_id === ctx.invocationId && INGESTED_KINDS.has(event.kind));
      if (events.length === 0) return;
      if (sink.mode === 'outbox') {
        const baseJobId = `${ctx.sessionId}:${events[0].event_id}:${events[events.length - 1].event_id}`;
        await sink.enqueue({ appName: ctx.appName, userId: ctx.userId, baseJobId, events });
        return;
      }
      const session = await sessions.getSession(ref);
      if (session !== undefined) await sink.memory.addSessionToMemory({ session, events });
    },
  });
}
