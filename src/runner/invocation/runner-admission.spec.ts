import { AdmissionController } from '../../admission/admission-controller';
import type { Permit } from '../../admission/permit';
import {
  AGENT,
  CountingSessionService,
  drain,
  expectError,
  hangingStep,
  makeRunner,
  Observers,
  runnerError,
  scriptedAgent,
  countingTool,
  until,
  USER,
} from '../testing/runner-harness';

describe('Runner admission (spec 03 §6.1)', () => {
  it('a reject-mode runner at capacity fails admission_failed with the admission code and touches no session', async () => {
    const controller = new AdmissionController({ globalLimit: 1, overflow: 'reject' });
    const held = await controller.acquire(AGENT);
    const sessions = new CountingSessionService();
    const agent = scriptedAgent([{ text: 'never' }]);
    const onAdmitted = jest.fn();
    const plugin = { name: 'watch', onUserMessageCallback: jest.fn(), onRunErrorCallback: jest.fn() };
    const runner = makeRunner({ agent, sessionService: sessions, admission: { controller }, plugins: [plugin] });

    const error = await runnerError(runner.run({ userId: USER, sessionId: 'ses-full', message: 'hello', onAdmitted }));

    // the refusing scope is carried on, so an HTTP answer can say which limit refused (spec 09 §10)
    expectError(error, 'admission_failed', { reason: 'concurrency_limit_reached', limit_scope: 'global' });
    expect(sessions.calls).toEqual([]);
    expect(await sessions.getSession({ appName: runner.appName, userId: USER, sessionId: 'ses-full' })).toBeUndefined();
    expect(agent.model.calls).toHaveLength(0);
    expect(onAdmitted).not.toHaveBeenCalled();
    expect(plugin.onUserMessageCallback).not.toHaveBeenCalled();
    expect(plugin.onRunErrorCallback).not.toHaveBeenCalled();
    controller.release(held);
  });

  it('a queue-mode runner waits for capacity and then runs', async () => {
    const controller = new AdmissionController({ globalLimit: 1 });
    const held = await controller.acquire(AGENT);
    const runner = makeRunner({ agent: scriptedAgent([{ text: 'done' }]), admission: { controller, overflow: 'queue' } });

    const pending = runner.run({ userId: USER, message: 'hi' });
    await until(() => controller.status().queue_length === 1);
    controller.release(held);

    expect((await pending).status).toBe('completed');
    expect(controller.status().active).toBe(0);
  });

  it('a queued run whose signal aborts leaves the queue empty and ends cancelled with the reason', async () => {
    const controller = new AdmissionController({ globalLimit: 1 });
    const held = await controller.acquire(AGENT);
    const sessions = new CountingSessionService();
    const runner = makeRunner({ agent: scriptedAgent([{ text: 'never' }]), sessionService: sessions, admission: { controller, overflow: 'queue', queueTimeoutMs: 'infinity' } });
    const abort = new AbortController();

    const pending = runner.run({ userId: USER, message: 'hi', signal: abort.signal });
    await until(() => controller.status().queue_length === 1);
    abort.abort('user_gave_up');
    const error = await runnerError(pending);

    expectError(error, 'cancelled', { reason: 'user_gave_up' });
    expect(controller.status().queue_length).toBe(0);
    expect(controller.status().active).toBe(1);
    expect(sessions.calls).toEqual([]);
    controller.release(held);
    expect(controller.status().active).toBe(0);
  });

  it('a queue timeout is admission_failed with queue_deadline_exceeded, never cancelled', async () => {
    const controller = new AdmissionController({ globalLimit: 1 });
    const held = await controller.acquire(AGENT);
    const runner = makeRunner({ agent: scriptedAgent([{ text: 'never' }]), admission: { controller, overflow: 'queue', queueTimeoutMs: 20 } });

    expectError(await runnerError(runner.run({ userId: USER, message: 'hi' })), 'admission_failed', { reason: 'queue_deadline_exceeded' });
    expect(controller.status().queue_length).toBe(0);
    controller.release(held);
  });

  it('an active run whose signal aborts returns its permit and ends cancelled', async () => {
    const controller = new AdmissionController({ globalLimit: 1 });
    const flag = { started: false } as { started: boolean; signal?: AbortSignal };
    const runner = makeRunner({ agent: scriptedAgent([hangingStep(flag)]), admission: { controller } });
    const abort = new AbortController();

    const pending = runner.run({ userId: USER, message: 'hi', signal: abort.signal });
    await until(() => flag.started);
    expect(controller.status().active).toBe(1);
    abort.abort('stop_now');

    expectError(await runnerError(pending), 'cancelled', { reason: 'stop_now' });
    expect(flag.signal?.aborted).toBe(true);
    expect(controller.status().active).toBe(0);
  });

  it('a run timing out after runTimeoutMs returns its permit and ends timeout {timeout_ms}', async () => {
    const controller = new AdmissionController({ globalLimit: 1 });
    const flag = { started: false } as { started: boolean; signal?: AbortSignal };
    const onRunErrorCallback = jest.fn();
    const runner = makeRunner({ agent: scriptedAgent([hangingStep(flag)]), admission: { controller }, runTimeoutMs: 40, plugins: [{ name: 'p', onRunErrorCallback }] });

    const error = await runnerError(runner.run({ userId: USER, message: 'hi' }));

    expectError(error, 'timeout', { timeout_ms: 40 });
    expect(flag.signal?.aborted).toBe(true);
    expect(controller.status().active).toBe(0);
    expect(onRunErrorCallback).not.toHaveBeenCalled();
  });

  it('a run timing out while queued removes its queue entry and ends timeout', async () => {
    const controller = new AdmissionController({ globalLimit: 1 });
    const held = await controller.acquire(AGENT);
    const runner = makeRunner({ agent: scriptedAgent([{ text: 'never' }]), admission: { controller, overflow: 'queue', queueTimeoutMs: 'infinity' }, runTimeoutMs: 30 });

    expectError(await runnerError(runner.run({ userId: USER, message: 'hi' })), 'timeout', { timeout_ms: 30 });
    expect(controller.status().queue_length).toBe(0);
    controller.release(held);
  });

  it('onAdmitted receives the invocation id of the run', async () => {
    const controller = new AdmissionController();
    const runner = makeRunner({ agent: scriptedAgent([{ text: 'ok' }]), admission: { controller } });
    const admitted: string[] = [];

    const result = await runner.run({ userId: USER, message: 'hi', onAdmitted: ({ invocation_id }) => void admitted.push(invocation_id) });

    expect(admitted).toEqual([result.invocation_id]);
    expect(result.invocation_id).toMatch(/^inv-[A-Za-z0-9_-]{24}$/);
  });
});

describe('Runner release on every path (spec 03 §6.9)', () => {
  const cases: Array<[string, () => { agent: ReturnType<typeof scriptedAgent>; policy?: object }, 'completed' | 'failed']> = [
    ['success', () => ({ agent: scriptedAgent([{ text: 'ok' }]) }), 'completed'],
    ['a model error', () => ({ agent: scriptedAgent([]) }), 'failed'],
    [
      'a throwing tool',
      () => ({
        agent: scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'explode', args: {} }] }, { text: 'recovered' }], {
          tools: [countingTool('explode', () => {
            throw new Error('boom');
          }).tool],
        }),
      }),
      'completed',
    ],
    ['an agent denial', () => ({ agent: scriptedAgent([{ text: 'never' }]), policy: { agents: { deny: 'all' } } }), 'failed'],
    [
      'a tool denial',
      () => ({ agent: scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'nope', args: {} }] }, { text: 'ok' }]), policy: { agents: { allow: 'all' } } }),
      'completed',
    ],
  ];

  it.each(cases)('%s leaves no permit active', async (_label, build, expected) => {
    const observers = new Observers();
    const controller = observers.admission({ globalLimit: 2 });
    const { agent, policy } = build();
    const runner = makeRunner({ agent, admission: { controller }, ...(policy ? { runtimePolicy: observers.policy(policy) } : {}) });

    const { result, error } = await drain(runner.runAsync({ userId: USER, message: 'hi' }));

    expect(error === undefined ? 'completed' : 'failed').toBe(expected);
    expect(result?.status ?? 'failed').toBe(expected);
    expect(controller.status().active).toBe(0);
    const outcomes = observers.telemetry.filter((entry) => entry.event === 'agent_runtime.admission.decision').map((entry) => (entry.payload as { outcome: string }).outcome);
    expect(outcomes).toEqual(['granted', 'released']);
  });

  it('a release returning false after revocation is normal and a throwing release is logged without content', async () => {
    const observers = new Observers();
    const base = new AdmissionController();
    const controller = {
      acquire: (agentId: string, options?: object) => base.acquire(agentId, options),
      release: (permit: Permit) => {
        base.release(permit);
        throw new Error('release exploded with secret-text');
      },
    };
    const runner = makeRunner({ agent: scriptedAgent([{ text: 'ok' }]), admission: { controller }, logger: observers.logger });

    expect((await runner.run({ userId: USER, message: 'hi' })).status).toBe('completed');
    expect(base.status().active).toBe(0);
    expect(observers.logLines).toHaveLength(1);
    expect(observers.logLines[0]).not.toContain('secret-text');
  });
});
