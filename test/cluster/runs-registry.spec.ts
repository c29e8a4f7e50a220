import { Client } from 'pg';
import { ScriptedModel } from '../../src/runner/models/scripted-model';
import type { RunStreamItem } from '../../src/runner/runs/run-registry.types';
import { openDatabaseHarness, useHarness } from '../support/database-harness';
import { eventually } from '../support/eventually';
import { startTcpProxy } from '../support/tcp-proxy';
import { AGENT, aborted, collect, startInstance, stepTool, steps } from './runs-cluster-harness';

const USER = 'u-1';

function expectWellFormed(items: readonly RunStreamItem[], firstSeq = 1): void {
  expect(items.map((item) => item.seq)).toEqual(items.map((_, index) => firstSeq + index));
  expect(items.filter((item) => item.type === 'terminal')).toHaveLength(1);
  expect(items[items.length - 1].type).toBe('terminal');
}

/** A tool that holds its call until the invocation's signal aborts; `running` settles once it was called. */
function holdingTool() {
  let signal: AbortSignal | undefined;
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const blocking = stepTool([], async (_callId, callSignal) => {
    signal = callSignal;
    started();
    await aborted(callSignal);
  });
  return { blocking, running, toolSignal: () => signal };
}

describe('runs across cluster instances (spec 08 §4)', () => {
  const harness = useHarness(() => openDatabaseHarness(), 'each');

  it('a run started on A is followed on B after afterSeq: complete, ordered, duplicate-free, terminal last, while items are appended', async () => {
    const h = harness();
    const executed: string[] = [];
    const slowStep = stepTool(executed, () => new Promise((resolve) => setTimeout(resolve, 25)));
    const a = await startInstance(h, 'follow-a', { agent: { name: AGENT, model: new ScriptedModel([...steps(8), { text: 'done' }]), tools: [slowStep] } });
    const b = await startInstance(h, 'follow-b', { agent: { name: AGENT, model: new ScriptedModel([]), tools: [] } });
    const { run_id: runId } = await a.registry.start({ agent: AGENT, userId: USER, message: 'go' });

    const onA: RunStreamItem[] = [];
    for await (const item of a.registry.subscribe(runId)) {
      onA.push(item);
      if (onA.length === 3) break;
    }
    const lastSeen = onA[onA.length - 1].seq;
    // B follows from there while A is still appending (each step takes 25 ms)
    expect((await b.registry.get(runId)).status).toBe('running');
    const [restOnB, fullOnB] = await Promise.all([collect(b.registry, runId, lastSeen), collect(b.registry, runId)]);
    expectWellFormed(restOnB, lastSeen + 1);
    expectWellFormed(fullOnB);
    expect([...onA, ...restOnB]).toEqual(fullOnB);
    expect(fullOnB[fullOnB.length - 1]).toMatchObject({ type: 'terminal', status: 'completed' });
    expect(await collect(a.registry, runId)).toEqual(fullOnB);
    expect(executed).toHaveLength(8);
  });

  it('a cancel posted to B stops the run A owns: A aborts its invocation and a slow tool sees its signal', async () => {
    const h = harness();
    const { blocking, running, toolSignal } = holdingTool();
    const a = await startInstance(h, 'cancel-a', { agent: { name: AGENT, model: new ScriptedModel([...steps(1), { text: 'never' }]), tools: [blocking] } });
    const b = await startInstance(h, 'cancel-b', { agent: { name: AGENT, model: new ScriptedModel([]), tools: [] } });
    const { run_id: runId } = await a.registry.start({ agent: AGENT, userId: USER, message: 'hold' });
    await running;
    expect(a.registry.status().active).toBe(1);

    const record = await b.registry.cancel(runId, 'user-stop');
    expect(record).toMatchObject({ status: 'cancelled', error: { code: 'cancelled', details: { reason: 'user-stop' } } });
    await eventually(() => toolSignal()?.aborted, 5000, "the tool's signal on A aborts");
    await eventually(() => a.registry.status().active === 0, 5000, 'A lets the invocation go');
    const items = await collect(a.registry, runId);
    expectWellFormed(items);
    expect(items[items.length - 1]).toEqual({ seq: items.length, type: 'terminal', status: 'cancelled', cancelled: 'user-stop' });
    await expect(a.registry.cancel(runId)).rejects.toMatchObject({ code: 'run_not_active' });
  });

  it('a confirm posted to B resumes a run paused on A; B becomes the owner', async () => {
    const h = harness();
    const onA: string[] = [];
    const onB: string[] = [];
    const confirmStep = (executed: string[]) => stepTool(executed, undefined, { requireConfirmation: true });
    const script = () => new ScriptedModel([{ toolCalls: [{ id: 'p1', name: 'step', args: { n: 'p' } }] }, { text: 'confirmed' }]);
    const a = await startInstance(h, 'confirm-a', { agent: { name: AGENT, model: script(), tools: [confirmStep(onA)] } });
    const b = await startInstance(h, 'confirm-b', { agent: { name: AGENT, model: new ScriptedModel([{ text: 'confirmed on b' }]), tools: [confirmStep(onB)] } });
    const { run_id: runId } = await a.registry.start({ agent: AGENT, userId: USER, message: 'pay' });
    await eventually(async () => (await b.registry.get(runId)).status === 'paused', 5000, 'the run pauses');

    const record = await b.registry.confirm(runId, 'p1', { confirmed: true });
    expect(record.status).toBe('running');
    const [owner] = await h.sql<{ owner_instance: string }>('SELECT owner_instance FROM agent_runtime_runs WHERE run_id = $1', [runId]);
    expect(owner.owner_instance).toBe('confirm-b');
    const items = await collect(a.registry, runId);
    expectWellFormed(items);
    expect(items.map((item) => item.type)).toContain('paused');
    expect(items.map((item) => item.type)).toContain('resumed');
    expect(items[items.length - 1]).toMatchObject({ type: 'terminal', status: 'completed' });
    expect(onA).toEqual([]);
    expect(onB).toEqual(['p1']);
  });

  it('a confirm posted after every instance restarted resumes the paused run', async () => {
    const h = harness();
    const executed: string[] = [];
    const confirmStep = stepTool(executed, undefined, { requireConfirmation: true });
    const agent = (model: ScriptedModel) => ({ name: AGENT, model, tools: [confirmStep] });
    const a = await startInstance(h, 'restart-a', { agent: agent(new ScriptedModel([{ toolCalls: [{ id: 'p1', name: 'step', args: { n: 'p' } }] }])) });
    const b = await startInstance(h, 'restart-b', { agent: agent(new ScriptedModel([])) });
    const { run_id: runId } = await a.registry.start({ agent: AGENT, userId: USER, message: 'pay' });
    await eventually(async () => (await a.registry.get(runId)).status === 'paused', 5000, 'the run pauses');
    await Promise.all([a.stop(), b.stop()]);

    const c = await startInstance(h, 'restart-c', { agent: agent(new ScriptedModel([])) });
    const d = await startInstance(h, 'restart-d', { agent: agent(new ScriptedModel([{ text: 'after the restart' }])) });
    expect(await c.registry.get(runId)).toMatchObject({ status: 'paused', pending_call_ids: ['p1'] });
    await d.registry.confirm(runId, 'p1', { confirmed: true });
    const items = await collect(c.registry, runId);
    expectWellFormed(items);
    expect(items[items.length - 1]).toMatchObject({ type: 'terminal', status: 'completed' });
    expect(executed).toEqual(['p1']);
  });

  it('maxRuns counts the active runs of both instances', async () => {
    const h = harness();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const held = () => ({ name: AGENT, model: new ScriptedModel([...steps(1), { text: 'ok' }]), tools: [stepTool([], () => gate)] });
    const a = await startInstance(h, 'max-a', { agent: held(), registry: { maxRuns: 2 } });
    const b = await startInstance(h, 'max-b', { agent: held(), registry: { maxRuns: 2 } });
    await a.registry.start({ agent: AGENT, userId: USER, message: 'one' });
    await b.registry.start({ agent: AGENT, userId: USER, message: 'two' });
    await expect(a.registry.start({ agent: AGENT, userId: USER, message: 'three' })).rejects.toMatchObject({ code: 'run_capacity_reached', details: { limit: 2 } });
    await expect(b.registry.start({ agent: AGENT, userId: USER, message: 'three' })).rejects.toMatchObject({ code: 'run_capacity_reached' });
    release();
    await eventually(async () => (await a.store.countActive()) === 0, 5000, 'both runs finish');
    // finished runs make room
    await expect(b.registry.start({ agent: AGENT, userId: USER, message: 'four' })).resolves.toMatchObject({ run_id: expect.any(String) });
  });

  it('a non-durable run whose owner died ends failed with owner_lost, and the dead owner stops its invocation', async () => {
    const h = harness();
    const { blocking, running, toolSignal } = holdingTool();
    const a = await startInstance(h, 'lost-a', { agent: { name: AGENT, model: new ScriptedModel([...steps(1), { text: 'never' }]), tools: [blocking] } });
    const b = await startInstance(h, 'lost-b', { agent: { name: AGENT, model: new ScriptedModel([]), tools: [] } });
    const { run_id: runId } = await a.registry.start({ agent: AGENT, userId: USER, message: 'hold' });
    await running;
    // A's instance lock goes while A's process still runs the invocation
    await a.instance.stop();
    await eventually(async () => (await b.registry.get(runId)).status === 'failed', 5000, 'B takes the run over');
    expect(await b.registry.get(runId)).toMatchObject({ status: 'failed', error: { code: 'owner_lost', details: {} } });
    await eventually(() => toolSignal()?.aborted, 5000, "A's invocation is aborted");
    const items = await collect(b.registry, runId);
    expectWellFormed(items);
    expect(items[items.length - 1]).toEqual({ seq: items.length, type: 'terminal', status: 'failed', error: { code: 'owner_lost', details: {} } });
  });

  it('a durable run whose owner died is resumed by B from its checkpoint: no completed step runs again, the stream reaches its terminal item', async () => {
    const h = harness();
    const proxy = await startTcpProxy(h.database.url);
    const onA: string[] = [];
    const onB: string[] = [];
    let kill!: () => void;
    const killed = new Promise<void>((resolve) => (kill = resolve));
    let atStep2!: () => void;
    const reachedStep2 = new Promise<void>((resolve) => (atStep2 = resolve));
    const threeSteps = { toolCalls: ['c1', 'c2', 'c3'].map((id) => ({ id, name: 'step', args: { n: id } })) };
    const a = await startInstance(h, 'durable-a', {
      url: proxy.url,
      durable: true,
      agent: {
        name: AGENT,
        model: new ScriptedModel([threeSteps, { text: 'never on a' }]),
        tools: [
          stepTool(onA, async (callId) => {
            if (callId !== 'c2') return;
            atStep2();
            await killed;
          }),
        ],
      },
    });
    const b = await startInstance(h, 'durable-b', { durable: true, agent: { name: AGENT, model: new ScriptedModel([{ text: 'all three done' }]), tools: [stepTool(onB)] } });
    const { run_id: runId } = await a.registry.start({ agent: AGENT, userId: USER, message: 'three steps', durable: true });
    await reachedStep2;
    // the Runner runs ahead of the store writes: wait until the run records its invocation (a run without one cannot be resumed)
    await eventually(async () => (await b.registry.get(runId)).invocation_id !== null, 5000, 'the invocation id is stored');
    // A's LISTEN connection is closed first: pg-listen keeps retrying a lost connection even after close(), which would outlive the test
    await a.store.stop();
    // the host vanishes: every other connection of A goes (its instance lock, its ledger lock, its pool)
    await proxy.sever();
    kill();
    const items = await collect(b.registry, runId);
    expectWellFormed(items);
    expect(items[items.length - 1]).toEqual({ seq: items.length, type: 'terminal', status: 'completed' });
    expect(onA).toEqual(['c1', 'c2']);
    expect(onB).toEqual(['c2', 'c3']);
    const [row] = await h.sql<{ owner_instance: string; status: string }>('SELECT owner_instance, status FROM agent_runtime_runs WHERE run_id = $1', [runId]);
    expect(row).toEqual({ owner_instance: 'durable-b', status: 'completed' });
    const responses = items.filter((item) => item.type === 'event' && item.event.kind === 'tool_response').map((item) => (item.type === 'event' ? (item.event.content as { call_id: string }).call_id : ''));
    // B's stream goes on with B's events; A's response to c1 is in the session (and the checkpoint), in the stream only if A published it before it died
    expect(responses.filter((id) => id !== 'c1')).toEqual(['c2', 'c3']);
    expect(responses.filter((id) => id === 'c1').length).toBeLessThanOrEqual(1);
  });

  it('keeps content out of the run rows, the notifications and the errors', async () => {
    const h = harness();
    const secret = 'canary-3f9a1c7e5b2d';
    const a = await startInstance(h, 'content-a', {
      agent: { name: AGENT, model: new ScriptedModel([{ toolCalls: [{ id: 'k1', name: 'step', args: { n: secret } }] }, { text: `final ${secret}` }]), tools: [stepTool([])] },
    });
    const listener = new Client({ connectionString: h.database.url });
    await listener.connect();
    h.track(() => listener.end());
    const payloads: string[] = [];
    listener.on('notification', (message) => payloads.push(message.payload ?? ''));
    await listener.query('LISTEN agent_runtime_runs');
    const { run_id: runId } = await a.registry.start({ agent: AGENT, userId: USER, message: `please ${secret}` });
    const items = await collect(a.registry, runId);
    expect(JSON.stringify(items)).toContain(secret); // the items are the content's only home
    const rows = await h.sql('SELECT * FROM agent_runtime_runs');
    expect(JSON.stringify(rows)).not.toContain(secret);
    await eventually(() => payloads.length >= items.length, 5000, 'every item is announced');
    for (const payload of payloads) expect(payload).toMatch(/^run-[A-Za-z0-9_-]+:\d+$/);
    await a.stop();
    const failure = await a.store.get(runId).then(() => undefined, (error: unknown) => error);
    expect(failure).toMatchObject({ code: 'cluster_unavailable', details: { reason: 'stopped' } });
    expect(`${String(failure)} ${JSON.stringify(failure)}`).not.toContain(secret);
  });
});
