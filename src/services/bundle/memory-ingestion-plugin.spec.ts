import { InMemorySessionService } from '../sessions/in-memory-session-service';
import type { ReadonlyContext } from '../../runner/agent.types';
import { memoryIngestionPlugin } from './memory-ingestion-plugin';

const ctx: ReadonlyContext = Object.freeze({ appName: 'app', userId: 'u', sessionId: 's', invocationId: 'inv-1', agentName: 'a', state: {} });

async function sessionWithEvents() {
  const sessions = new InMemorySessionService();
  await sessions.createSession({ appName: 'app', userId: 'u', sessionId: 's' });
  const ref = { appName: 'app', userId: 'u', sessionId: 's' };
  const event = (id: string, invocation: string, kind: 'user_message' | 'model_turn' | 'final_output') =>
    sessions.appendEvent(ref, { event_id: id, invocation_id: invocation, author: kind === 'user_message' ? 'user' : 'a', kind, content: { role: 'user', parts: [{ text: id }] } });
  await event('evt-old', 'inv-0', 'user_message');
  await event('evt-1', 'inv-1', 'user_message');
  await event('evt-2', 'inv-1', 'model_turn');
  await event('evt-3', 'inv-1', 'final_output');
  return sessions;
}

describe('the memory ingestion plugin (spec 07 §5)', () => {
  it('enqueues the invocation\'s user_message and final_output events under an idempotent base id', async () => {
    const jobs: Array<{ baseJobId: string; events: readonly { event_id: string }[] }> = [];
    const plugin = memoryIngestionPlugin(await sessionWithEvents(), { mode: 'outbox', available: () => true, enqueue: async (job) => void jobs.push(job) });
    expect(plugin.name).toBe('agent_runtime_memory_ingestion');
    await plugin.afterRunCallback!({ ctx, output: { role: 'model', parts: [] } });
    expect(jobs.map((job) => [job.baseJobId, job.events.map((event) => event.event_id)])).toEqual([['s:evt-1:evt-3', ['evt-1', 'evt-3']]]);
  });

  it('fails with memory_outbox_runtime_required once its generation stopped, before reading the session', async () => {
    const plugin = memoryIngestionPlugin(await sessionWithEvents(), { mode: 'outbox', available: () => false, enqueue: async () => undefined });
    await expect(plugin.afterRunCallback!({ ctx, output: { role: 'model', parts: [] } })).rejects.toMatchObject({ code: 'memory_outbox_runtime_required' });
  });

  it('adds the events to memory directly in the ephemeral profile', async () => {
    const added: unknown[] = [];
    const memory = { addSessionToMemory: async (input: unknown) => (added.push(input), { added: 2, duplicates: 0 }) } as never;
    const plugin = memoryIngestionPlugin(await sessionWithEvents(), { mode: 'direct', memory });
    await plugin.afterRunCallback!({ ctx, output: { role: 'model', parts: [] } });
    expect(added).toEqual([expect.objectContaining({ session: expect.objectContaining({ session_id: 's' }), events: [expect.objectContaining({ event_id: 'evt-1' }), expect.objectContaining({ event_id: 'evt-3' })] })]);
  });
});
