import { AdmissionController } from '../../src/admission/admission-controller';
import { RunRegistry } from '../../src/runner/runs/run-registry';
import type { Agent } from '../../src/runner/agent.types';
import type { Clock } from '../../src/shared/time/clock';
import type { RunnerError } from '../../src/runner/runner.errors';
import { makeRunner, Observers, runnerError, scriptedAgent, canary, USER } from '../../src/runner/testing/runner-harness';
import { SessionServiceDouble } from '../../src/runner/testing/session-service-double';
import { hungSites, LATE_LOG_CODE, SETTLE_BOUND_MS, timeoutWatchClock, type Armed, type HungSite } from './hung-user-code.fixture';

/**
 * Spec 03 §6, issue 23 item 3: user code that never returns cannot pin an invocation. For each place
 * the Runner awaits code it was given, the code hangs (ignoring its signal); a cancel and a run
 * timeout each settle the run within the bound, return the admission permit, and the hung code's
 * late result is discarded and logged once, without content.
 */
describe.each(hungSites())('a never-returning $name', (site: HungSite) => {
  const build = (armed: Armed, observers: Observers, controller: AdmissionController, runTimeoutMs?: number, clock?: Clock) =>
    makeRunner({
      agent: armed.agent,
      sessionService: armed.sessionService(new SessionServiceDouble()),
      plugins: armed.plugins,
      admission: { controller },
      logger: observers.logger,
      ...(runTimeoutMs === undefined ? {} : { runTimeoutMs }),
      ...(clock === undefined ? {} : { clock }),
    });

  it('a cancel settles the run as cancelled within the bound and returns the permit', async () => {
    const observers = new Observers();
    const controller = new AdmissionController({ globalLimit: 4 });
    const abort = new AbortController();
    const armed = site.arm();
    const runner = build(armed, observers, controller);

    const pending = runnerError(runner.run({ userId: USER, message: 'hello', signal: abort.signal }));
    await armed.hang.started;
    expect(controller.status().active).toBe(1);
    const cancelledAt = performance.now();
    abort.abort('operator');
    const error: RunnerError = await pending;
    const settledMs = performance.now() - cancelledAt;

    expect(error.code).toBe('cancelled');
    expect(error.details).toEqual({ reason: 'operator' });
    expect(settledMs).toBeLessThanOrEqual(SETTLE_BOUND_MS);
    expect(controller.status().active).toBe(0);
    expect(controller.status().queue_length).toBe(0);
  });

  it('runTimeoutMs settles the run as timeout within the bound, and the late result is logged once without content', async () => {
    const observers = new Observers();
    const controller = new AdmissionController({ globalLimit: 4 });
    const armed = site.arm();
    const clock = timeoutWatchClock(200);
    const runner = build(armed, observers, controller, 200, clock);

    const error = await runnerError(runner.run({ userId: USER, message: 'hello' }));
    const settledAt = performance.now();

    expect(error.code).toBe('timeout');
    expect(settledAt - (clock.firedAt() as number)).toBeLessThanOrEqual(SETTLE_BOUND_MS);
    expect(controller.status().active).toBe(0);
    expect(observers.logLines.filter((line) => line.includes(LATE_LOG_CODE))).toEqual([]);

    const secret = canary();
    armed.hang.finish(secret);
    armed.hang.finish(secret);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const late = observers.logLines.filter((line) => line.includes(LATE_LOG_CODE));
    expect(late).toHaveLength(1);
    expect(late[0]).toContain(`site=${site.logSite}`);
    expect(observers.text()).not.toContain(secret);
  });
});

describe('after the end, nothing the invocation was given is called again', () => {
  it('a hung beforeToolCallback that returns late does not make the tool run', async () => {
    let release!: () => void;
    let started!: () => void;
    const hungStarted = new Promise<void>((resolve) => (started = resolve));
    const execute = jest.fn(() => ({ ok: true }));
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'act', args: {} }] }, { text: 'done' }], {
      tools: [{ name: 'act', execute }],
      beforeToolCallback: () => {
        started();
        return new Promise<undefined>((resolve) => (release = () => resolve(undefined)));
      },
    } as Partial<Agent>);
    const abort = new AbortController();
    const pending = runnerError(makeRunner({ agent }).run({ userId: USER, message: 'hi', signal: abort.signal }));
    await hungStarted;
    abort.abort();
    expect((await pending).code).toBe('cancelled');

    release();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(execute).not.toHaveBeenCalled();
    expect(agent.model.calls).toHaveLength(1);
  });
});

describe('toolsets of an ended invocation', () => {
  it("a toolset close() that never returns is called but not awaited once the invocation was cancelled", async () => {
    const close = jest.fn(() => new Promise<void>(() => undefined));
    let started!: () => void;
    const executing = new Promise<void>((resolve) => (started = resolve));
    const toolset = {
      name: 'remote',
      listToolNames: () => ['act'],
      materialize: () => ({
        name: 'act',
        execute: () => {
          started();
          return new Promise(() => undefined);
        },
      }),
      close,
    };
    const agent = scriptedAgent([{ toolCalls: [{ id: 'c1', name: 'act', args: {} }] }], { tools: [toolset] } as Partial<Agent>);
    const abort = new AbortController();
    const pending = runnerError(makeRunner({ agent }).run({ userId: USER, message: 'hi', signal: abort.signal }));
    await executing;
    const cancelledAt = performance.now();
    abort.abort();

    expect((await pending).code).toBe('cancelled');
    expect(performance.now() - cancelledAt).toBeLessThanOrEqual(SETTLE_BOUND_MS);
    expect(close).toHaveBeenCalledTimes(1);
  });
});

describe('RunRegistry.shutdown with hung user code', () => {
  it.each(hungSites().map((site) => [site.name, site] as const))('does not wait its grace for a run hung at: %s', async (_name, site) => {
    const armed = site.arm();
    const controller = new AdmissionController({ globalLimit: 4 });
    const runner = makeRunner({ agent: armed.agent, plugins: armed.plugins, sessionService: armed.sessionService(new SessionServiceDouble()), admission: { controller } });
    const registry = new RunRegistry({ runners: [runner], shutdownGraceMs: 10_000 });
    const { run_id } = await registry.start({ agent: armed.agent.name, userId: USER, message: 'hello' });
    await armed.hang.started;

    const startedAt = performance.now();
    await registry.shutdown();

    expect(performance.now() - startedAt).toBeLessThan(1000);
    expect(await registry.get(run_id)).toMatchObject({ status: 'cancelled', error: { code: 'cancelled', details: { reason: 'shutdown' } } });
    expect(registry.status()).toEqual({ accepting: false, active: 0 });
    expect(controller.status().active).toBe(0);
  });
});
