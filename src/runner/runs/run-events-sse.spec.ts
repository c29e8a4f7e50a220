import { EventEmitter } from 'node:events';
import { ManualClock } from '../../shared/time/manual-clock';
import { pipeRunEvents, sseFrame, SSE_HEARTBEAT_MS, type SseTarget } from './run-events-sse';
import { RunRegistry } from './run-registry';
import { RegistryRunnerDouble } from './testing/registry-runner-double';

class FakeResponse extends EventEmitter {
  readonly chunks: string[] = [];
  writableEnded = false;
  destroyed = false;
  /** What `write` answers (false = the socket buffer is full). */
  accept = true;

  write(chunk: string): boolean {
    this.chunks.push(chunk);
    return this.accept;
  }

  end(): this {
    this.writableEnded = true;
    return this;
  }

  /** The client goes away. */
  disconnect(): void {
    this.destroyed = true;
    this.emit('close');
  }

  get text(): string {
    return this.chunks.join('');
  }
}

async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
}

async function setup() {
  const runner = new RegistryRunnerDouble();
  const clock = new ManualClock();
  const registry = new RunRegistry({ runners: [runner], clock });
  const { run_id } = await registry.start({ agent: 'assistant', userId: 'u', message: 'hi' });
  await flush();
  const out = new FakeResponse();
  const subscription = registry.subscribe(run_id);
  const piping = pipeRunEvents(subscription, out as unknown as SseTarget, { clock });
  return { runner, clock, registry, run_id, out, subscription, piping, invocation: runner.last };
}

describe('the event stream of a run (spec 03 §10)', () => {
  it('frames an item as id, event and one line of JSON data', () => {
    expect(sseFrame({ seq: 3, type: 'paused', pending_call_ids: ['call-1'] })).toBe('id: 3\nevent: paused\ndata: {"seq":3,"type":"paused","pending_call_ids":["call-1"]}\n\n');
    const withNewline = sseFrame({ seq: 1, type: 'resume_failed', error: { code: 'x', details: { field: 'a\nb' } } });
    expect(withNewline.split('\n')).toHaveLength(5);
  });

  it('writes every item in order and ends the response after the terminal item', async () => {
    const t = await setup();
    t.invocation.admit().event().complete();
    await t.piping;
    expect(t.out.text).toMatch(/^id: 1\nevent: event\ndata: \{"seq":1,"type":"event".*\n\nid: 2\nevent: terminal\ndata: \{"seq":2,"type":"terminal","status":"completed"\}\n\n$/s);
    expect(t.out.writableEnded).toBe(true);
    expect(t.clock.pendingTimers).toBe(1); // the run's expiry only: the heartbeat is cleared
  });

  it('sends a heartbeat comment every 15 s while the run is quiet', async () => {
    const t = await setup();
    t.clock.advance(SSE_HEARTBEAT_MS - 1);
    expect(t.out.chunks).toEqual([]);
    t.clock.advance(1);
    expect(t.out.chunks).toEqual([': heartbeat\n\n']);
    t.clock.advance(SSE_HEARTBEAT_MS);
    expect(t.out.chunks).toEqual([': heartbeat\n\n', ': heartbeat\n\n']);
    t.invocation.admit().complete();
    await t.piping;
  });

  it('a client that goes away only detaches: the run goes on and nothing more is written', async () => {
    const t = await setup();
    t.invocation.admit().event();
    await flush();
    t.out.disconnect();
    await t.piping;
    expect(t.out.writableEnded).toBe(false);
    const written = t.out.chunks.length;
    t.invocation.event().complete();
    await flush();
    expect(t.out.chunks).toHaveLength(written);
    expect(await t.registry.get(t.run_id)).toMatchObject({ status: 'completed', last_seq: 3 });
    expect(t.invocation.request.signal?.aborted).toBe(false);
    t.clock.advance(SSE_HEARTBEAT_MS * 3);
    expect(t.out.chunks).toHaveLength(written);
  });

  it('waits for the socket to drain before writing on', async () => {
    const t = await setup();
    t.out.accept = false;
    t.invocation.admit().event().event();
    await flush();
    expect(t.out.chunks).toHaveLength(1);
    t.out.accept = true;
    t.out.emit('drain');
    await flush();
    expect(t.out.chunks).toHaveLength(2);
    t.invocation.complete();
    await t.piping;
    expect(t.out.chunks).toHaveLength(3);
  });

  it('ends the stream when the subscriber falls behind the buffer', async () => {
    const runner = new RegistryRunnerDouble();
    const clock = new ManualClock();
    const registry = new RunRegistry({ runners: [runner], clock, maxBufferedItems: 1 });
    const { run_id } = await registry.start({ agent: 'assistant', userId: 'u', message: 'hi' });
    await flush();
    const out = new FakeResponse();
    out.accept = false;
    const piping = pipeRunEvents(registry.subscribe(run_id), out as unknown as SseTarget, { clock });
    runner.last.admit().event();
    await flush();
    runner.last.event().event();
    await flush();
    out.emit('drain');
    await piping;
    expect(out.chunks).toHaveLength(1);
    expect(out.writableEnded).toBe(true);
  });
});
