import type { DataSource } from 'typeorm';
import { InvocationLedger } from '../../src/ledger/invocation-ledger';
import { LedgerError } from '../../src/ledger/ledger.errors';
import type { Agent, Tool } from '../../src/runner/agent.types';
import { PostgresSessionService } from '../../src/services/sessions/postgres-session-service';
import { Runner } from '../../src/runner/runner';
import { RunnerError } from '../../src/runner/runner.errors';
import { HANDOVER_REASON } from '../../src/runner/invocation/invocation-scope';
import { ScriptedModel } from '../../src/runner/models/scripted-model';
import type { SessionEvent } from '../../src/runner/session.types';
import { openLedgerHarness, type LedgerHarness } from '../support/ledger-harness';
import { startTcpProxy } from '../support/tcp-proxy';

/** Two instances of one service on one database: each its own pool, ledger instance and session service. */
interface Instance {
  readonly dataSource: DataSource;
  readonly ledger: InvocationLedger;
  readonly sessions: PostgresSessionService;
}

const LEASE_MS = 1500;
const THREE_STEPS = { toolCalls: ['c1', 'c2', 'c3'].map((id) => ({ id, name: 'step', args: { n: id } })) };

let harness: LedgerHarness;

beforeAll(async () => {
  harness = await openLedgerHarness();
});

afterAll(async () => {
  await harness.close();
});

async function instance(instanceId: string, url?: string): Promise<Instance> {
  const dataSource = await harness.dataSource({}, url);
  const ledger = await harness.ledger({ instanceId, defaultLeaseMs: LEASE_MS }, {}, dataSource);
  const sessions = new PostgresSessionService(dataSource);
  await sessions.start();
  return { dataSource, ledger, sessions };
}

function stepTool(executed: string[], onStart: (callId: string, signal: AbortSignal) => Promise<void> = async () => undefined): Tool {
  return {
    name: 'step',
    parameters: { type: 'object', properties: { n: { type: 'string' } }, required: ['n'], additionalProperties: false },
    async execute(args, ctx) {
      executed.push(ctx.callId);
      await onStart(ctx.callId, ctx.signal);
      return { done: args.n, key: ctx.idempotencyKey };
    },
  };
}

function runnerOf(node: Instance, agent: Agent): Runner {
  return new Runner({ appName: 'durable-app', agent, sessionService: node.sessions, ledger: node.ledger });
}

/** A `step` tool that, at call c2, runs `stop` and then holds the call until the invocation's signal aborts. */
function stopAtStepTwo(executed: string[], stop: () => Promise<unknown>): Tool {
  return stepTool(executed, async (callId, signal) => {
    if (callId !== 'c2') return;
    await stop();
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
  });
}

describe('durable invocations across instances (spec 03 §8, 04 §9)', () => {
  test('aborted with HANDOVER_REASON, a durable invocation records no end: its row stays running, and another instance resumes it once the first ledger closed', async () => {
    const first = await instance('handover-a');
    const second = await instance('handover-b');
    const handover = new AbortController();
    const executedOnFirst: string[] = [];
    let invocationId = '';
    const firstRunner = runnerOf(first, {
      name: 'stepper',
      model: new ScriptedModel([THREE_STEPS, { text: 'never reached' }]),
      tools: [
        stopAtStepTwo(executedOnFirst, async () => handover.abort(HANDOVER_REASON)),
      ],
    });
    const outcome = await firstRunner
      .run({ userId: 'u-2', sessionId: 'handover-session', message: 'run three steps', durable: true, onAdmitted: ({ invocation_id }) => (invocationId = invocation_id), signal: handover.signal })
      .then(() => 'completed', (error: unknown) => (RunnerError.isRunnerError(error) ? error.code : 'other'));
    expect(outcome).toBe('cancelled');
    const [row] = await harness.sql<{ phase: string; owner_instance: string }>('SELECT phase, owner_instance FROM agent_runtime_invocations WHERE id = $1', [invocationId]);
    expect(row).toEqual({ phase: 'running', owner_instance: 'handover-a' });

    const secondRunner = runnerOf(second, { name: 'stepper', model: new ScriptedModel([{ text: 'handed over and done' }]), tools: [stepTool([])] });
    const resume = () => secondRunner.resume({ userId: 'u-2', sessionId: 'handover-session', invocationId });
    await expect(resume()).rejects.toMatchObject({ code: 'invocation_owned' });
    await first.ledger.close();
    const executedOnSecond: string[] = [];
    const resumed = await runnerOf(second, { name: 'stepper', model: new ScriptedModel([{ text: 'handed over and done' }]), tools: [stepTool(executedOnSecond)] }).resume({
      userId: 'u-2',
      sessionId: 'handover-session',
      invocationId,
    });
    expect(resumed).toMatchObject({ status: 'completed', invocation_id: invocationId });
    expect(executedOnSecond).toEqual(['c2', 'c3']);
  });

  test('the string "handover" as a cancel reason is an ordinary cancel: the row ends cancelled', async () => {
    const node = await instance('handover-string');
    const cancel = new AbortController();
    let invocationId = '';
    const runner = runnerOf(node, {
      name: 'stepper',
      model: new ScriptedModel([THREE_STEPS, { text: 'never reached' }]),
      tools: [stopAtStepTwo([], async () => cancel.abort('handover'))],
    });
    await expect(
      runner.run({ userId: 'u-3', sessionId: 'handover-string-session', message: 'go', durable: true, onAdmitted: ({ invocation_id }) => (invocationId = invocation_id), signal: cancel.signal }),
    ).rejects.toMatchObject({ code: 'cancelled', details: { reason: 'handover' } });
    const [row] = await harness.sql<{ phase: string }>('SELECT phase FROM agent_runtime_invocations WHERE id = $1', [invocationId]);
    expect(row.phase).toBe('cancelled');
  });

  test('an invocation killed after step 1 of 3 is resumed on a second instance, which runs only steps 2 and 3', async () => {
    const proxy = await startTcpProxy(harness.database.url);
    const first = await instance('instance-a', proxy.url);
    const second = await instance('instance-b');
    const killed = new AbortController();
    const executedOnFirst: string[] = [];
    let invocationId = '';
    const firstRunner = runnerOf(first, {
      name: 'stepper',
      model: new ScriptedModel([THREE_STEPS, { text: 'never reached' }]),
      tools: [
        // the host dies while step 2 runs: its connections go, and the process stops the invocation
        stopAtStepTwo(executedOnFirst, async () => {
          await proxy.sever();
          killed.abort('killed');
        }),
      ],
    });
    const outcome = await firstRunner
      .run({ userId: 'u-1', sessionId: 'durable-session-1', message: 'run three steps', durable: true, onAdmitted: ({ invocation_id }) => (invocationId = invocation_id), signal: killed.signal })
      .then(() => 'completed', (error: unknown) => (RunnerError.isRunnerError(error) ? error.code : 'other'));
    expect(outcome).toBe('cancelled');
    expect(executedOnFirst).toEqual(['c1', 'c2']);

    const [row] = await harness.sql<{ phase: string; owner_instance: string; checkpoint: { completed_steps: Array<{ step_id: string }> } }>(
      'SELECT phase, owner_instance, checkpoint FROM agent_runtime_invocations WHERE id = $1',
      [invocationId],
    );
    expect(row.phase).toBe('running');
    expect(row.owner_instance).toBe('instance-a');
    expect(row.checkpoint.completed_steps.map((step) => step.step_id)).toEqual(['c1']);

    const executedOnSecond: string[] = [];
    const secondModel = new ScriptedModel([{ text: 'all three done' }]);
    const secondRunner = runnerOf(second, { name: 'stepper', model: secondModel, tools: [stepTool(executedOnSecond)] });
    const resume = () => secondRunner.resume({ userId: 'u-1', sessionId: 'durable-session-1', invocationId });

    // the first owner's instance lock went with its connections: the ledger sees the owner dead at once
    const result = await resume();
    expect(result).toMatchObject({ status: 'completed', invocation_id: invocationId, output: { role: 'model', parts: [{ text: 'all three done' }] } });
    expect(executedOnSecond).toEqual(['c2', 'c3']);
    // the model saw the whole turn answered: step 1 from the first instance, steps 2 and 3 from the second
    const toolEntries = secondModel.calls[0].contents.filter((entry) => entry.role === 'tool');
    expect(toolEntries.map((entry) => (entry.role === 'tool' ? entry.callId : ''))).toEqual(['c1', 'c2', 'c3']);

    const events: readonly SessionEvent[] = await second.sessions.listEvents({ appName: 'durable-app', userId: 'u-1', sessionId: 'durable-session-1' });
    const responses = events.filter((event) => event.kind === 'tool_response').map((event) => (event.content as { call_id: string }).call_id);
    expect(responses).toEqual(['c1', 'c2', 'c3']);
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));

    const [finished] = await harness.sql<{ phase: string; outcome: unknown; checkpoint: { completed_steps: Array<{ step_id: string; response: unknown }> } }>(
      'SELECT phase, outcome, checkpoint FROM agent_runtime_invocations WHERE id = $1',
      [invocationId],
    );
    expect(finished.phase).toBe('completed');
    expect(finished.outcome).toEqual({ status: 'completed' });
    expect(finished.checkpoint.completed_steps.map((step) => step.step_id)).toEqual(['c1', 'c2', 'c3']);
    expect(finished.checkpoint.completed_steps[1].response).toEqual({ success: true, result: { done: 'c2', key: `${invocationId}:c2` } });

    await expect(resume()).rejects.toMatchObject({ code: 'invocation_completed' });
  });

  test('a resume while the owning instance is alive and running the invocation is invocation_owned', async () => {
    const owner = await instance('instance-e');
    const other = await instance('instance-f');
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    let invocationId = '';
    const agent = (tools: Tool[]) => ({ name: 'stepper', model: new ScriptedModel([{ toolCalls: [{ id: 'b1', name: 'step', args: { n: 'b' } }] }, { text: 'ok' }]), tools });
    const first = runnerOf(owner, agent([stepTool([], async () => (started(), blocked))]));
    const run = first.run({ userId: 'u-4', sessionId: 'durable-owned', message: 'hold the row', durable: true, onAdmitted: ({ invocation_id }) => (invocationId = invocation_id) });
    await running;
    const executed: string[] = [];
    const second = runnerOf(other, agent([stepTool(executed)]));
    await expect(second.resume({ userId: 'u-4', sessionId: 'durable-owned', invocationId })).rejects.toMatchObject({ code: 'invocation_owned' });
    expect(executed).toEqual([]);
    release();
    await expect(run).resolves.toMatchObject({ status: 'completed' });
  });

  test('a completed durable run writes a content-free outcome and its checkpoint holds the stored responses', async () => {
    const node = await instance('instance-c');
    const runner = runnerOf(node, { name: 'stepper', model: new ScriptedModel([{ toolCalls: [{ id: 'only', name: 'step', args: { n: 'x' } }] }, { text: 'secret-output-text' }]), tools: [stepTool([])] });
    const result = await runner.run({ userId: 'u-2', message: 'one step', durable: true });
    const [row] = await harness.sql<{ phase: string; outcome: unknown; workflow_id: string; kind: string }>('SELECT phase, outcome, workflow_id, kind FROM agent_runtime_invocations WHERE id = $1', [
      result.invocation_id,
    ]);
    expect(row).toEqual({ phase: 'completed', outcome: { status: 'completed' }, workflow_id: 'stepper', kind: 'agent_run' });
    expect(JSON.stringify(row)).not.toContain('secret-output-text');
  });

  test('a terminal finish that meets a database blink is retried, so the row does not stay running', async () => {
    const node = await instance('instance-g');
    let failures = 1;
    const blinking = Object.create(node.ledger) as InvocationLedger;
    blinking.finish = (...args: Parameters<InvocationLedger['finish']>) => {
      if (failures > 0) {
        failures -= 1;
        return Promise.reject(new LedgerError('ledger_unavailable', { sqlstate: '57P01' }));
      }
      return node.ledger.finish(...args);
    };
    const runner = new Runner({ appName: 'durable-app', sessionService: node.sessions, ledger: blinking, agent: { name: 'stepper', model: new ScriptedModel([{ text: 'done' }]), tools: [] } });
    const result = await runner.run({ userId: 'u-5', message: 'finish through a blink', durable: true });
    expect(result.status).toBe('completed');
    expect(failures).toBe(0);
    const [row] = await harness.sql<{ phase: string }>('SELECT phase FROM agent_runtime_invocations WHERE id = $1', [result.invocation_id]);
    expect(row.phase).toBe('completed');
  });

  test('a durable pause finishes the row paused; the confirmed resume claims it and completes it', async () => {
    const node = await instance('instance-d');
    const executed: string[] = [];
    const confirmTool: Tool = { ...stepTool(executed), name: 'step', requireConfirmation: true };
    const agent = { name: 'stepper', model: new ScriptedModel([{ toolCalls: [{ id: 'p1', name: 'step', args: { n: 'p' } }] }, { text: 'confirmed and done' }]), tools: [confirmTool] };
    const runner = runnerOf(node, agent);
    const paused = await runner.run({ userId: 'u-3', sessionId: 'durable-pause', message: 'needs a human', durable: true });
    expect(paused).toMatchObject({ status: 'paused', pending_call_ids: ['p1'] });
    const [row] = await harness.sql<{ phase: string; checkpoint: { pending_call_ids: string[] } }>('SELECT phase, checkpoint FROM agent_runtime_invocations WHERE id = $1', [paused.invocation_id]);
    expect(row.phase).toBe('paused');
    expect(row.checkpoint.pending_call_ids).toEqual(['p1']);
    // a recovery resume without the decision is refused: a paused row needs it
    await expect(runner.resume({ userId: 'u-3', sessionId: 'durable-pause', invocationId: paused.invocation_id })).rejects.toMatchObject({ code: 'resume_input_required' });
    const done = await runner.resume({ userId: 'u-3', sessionId: 'durable-pause', invocationId: paused.invocation_id, callId: 'p1', confirmed: true });
    expect(done.status).toBe('completed');
    expect(executed).toEqual(['p1']);
    const [after] = await harness.sql<{ phase: string }>('SELECT phase FROM agent_runtime_invocations WHERE id = $1', [paused.invocation_id]);
    expect(after.phase).toBe('completed');
  });
});
