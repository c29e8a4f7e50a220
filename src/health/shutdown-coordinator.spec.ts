import { ManualClock } from '../shared/time/manual-clock';
import { ShutdownCoordinator, SHUTDOWN_PHASES, type ShutdownLog, type ShutdownPhase } from './shutdown-coordinator';

class RecordingLog implements ShutdownLog {
  readonly lines: string[] = [];
  log(message: string): void {
    this.lines.push(`log ${message}`);
  }
  warn(message: string): void {
    this.lines.push(`warn ${message}`);
  }
}

/** Lets microtasks run (participants' continuations) without moving the manual clock. */
const flush = async () => {
  for (let i = 0; i < 20; i += 1) await Promise.resolve();
};

function setup(settings: { timeoutMs?: number; minimumStepMs?: number } = {}) {
  const clock = new ManualClock();
  const log = new RecordingLog();
  const coordinator = new ShutdownCoordinator({ ...settings, clock, logger: log });
  return { clock, log, coordinator };
}

describe('shutdown order', () => {
  it('runs the phases in the written order whatever the registration order, the members of one phase together', async () => {
    const { coordinator } = setup();
    const events: string[] = [];
    for (const phase of [...SHUTDOWN_PHASES].reverse()) {
      coordinator.register({ component: `${phase}_a`, phase, run: async () => void events.push(`${phase}_a`) });
      coordinator.register({ component: `${phase}_b`, phase, run: () => void events.push(`${phase}_b`) });
    }
    const records = await coordinator.shutdown();
    expect(events).toEqual(SHUTDOWN_PHASES.flatMap((phase) => [`${phase}_a`, `${phase}_b`]));
    expect(records.every((record) => record.outcome === 'done')).toBe(true);
    expect(coordinator.state).toBe('stopped');
  });

  it('reports its state and the running phase; a second shutdown() gets the same run', async () => {
    const { coordinator } = setup();
    let release: () => void = () => {};
    coordinator.register({ component: 'runner', phase: 'runs', run: () => new Promise<void>((resolve) => (release = resolve)) });
    expect([coordinator.state, coordinator.phase]).toEqual(['serving', null]);
    const first = coordinator.shutdown();
    expect(coordinator.shutdown()).toBe(first);
    await flush();
    expect([coordinator.state, coordinator.phase]).toEqual(['shutting_down', 'runs']);
    release();
    await first;
    expect([coordinator.state, coordinator.phase]).toEqual(['stopped', 'runs']);
  });

  it('a participant removed before the shutdown does not run', async () => {
    const { coordinator } = setup();
    const events: string[] = [];
    const remove = coordinator.register({ component: 'gone', phase: 'services', run: () => void events.push('gone') });
    coordinator.register({ component: 'kept', phase: 'services', run: () => void events.push('kept') });
    remove();
    await coordinator.shutdown();
    expect(events).toEqual(['kept']);
  });
});

describe('bounded steps', () => {
  it('a step that hangs is logged with its counts once its bound passes, and the next step runs', async () => {
    const { coordinator, clock, log } = setup({ timeoutMs: 10_000, minimumStepMs: 1000 });
    const events: string[] = [];
    const signals: AbortSignal[] = [];
    coordinator.register({
      component: 'runner',
      phase: 'runs',
      run: (signal) => {
        signals.push(signal);
        return new Promise<void>(() => {});
      },
      counts: () => ({ runs: 3, paused: false }),
    });
    coordinator.register({ component: 'ledger', phase: 'ledger', run: () => void events.push('ledger') });
    const done = coordinator.shutdown();
    await flush();
    // 10 s in all, 1 s kept for the one later phase that has participants
    clock.advance(8999);
    await flush();
    expect(events).toEqual([]);
    clock.advance(1);
    const records = await done;
    expect(events).toEqual(['ledger']);
    expect(signals[0].aborted).toBe(true);
    expect(records).toEqual([
      { phase: 'runs', component: 'runner', outcome: 'timed_out' },
      { phase: 'ledger', component: 'ledger', outcome: 'done' },
    ]);
    expect(log.lines).toEqual(['warn shutdown step runs of "runner" did not finish within 9000 ms (runs 3, paused false); the next step runs']);
  });

  it('each later step with participants keeps its minimum even after an earlier one used the whole budget', async () => {
    const { coordinator, clock, log } = setup({ timeoutMs: 3000, minimumStepMs: 500 });
    const hang = (component: string, phase: ShutdownPhase) => coordinator.register({ component, phase, run: () => new Promise<void>(() => {}) });
    hang('runner', 'runs');
    hang('admission', 'admission_drain');
    hang('ledger', 'ledger');
    const done = coordinator.shutdown();
    for (let i = 0; i < 10 && coordinator.state !== 'stopped'; i += 1) {
      await flush();
      clock.advance(500);
    }
    await done;
    expect(log.lines.map((line) => line.replace(/ of .*within/, ' within'))).toEqual([
      'warn shutdown step runs within 2000 ms; the next step runs',
      'warn shutdown step admission_drain within 500 ms; the next step runs',
      'warn shutdown step ledger within 500 ms; the next step runs',
    ]);
  });

  it('a failing step is logged without its error text and the next step runs', async () => {
    const { coordinator, log } = setup();
    const events: string[] = [];
    coordinator.register({
      component: 'bundle',
      phase: 'services',
      run: () => {
        throw new Error('secret-canary');
      },
    });
    coordinator.register({ component: 'ledger', phase: 'ledger', run: () => void events.push('ledger') });
    const records = await coordinator.shutdown();
    expect(events).toEqual(['ledger']);
    expect(records[0]).toEqual({ phase: 'services', component: 'bundle', outcome: 'failed' });
    expect(log.lines).toEqual(['warn shutdown step services of "bundle" failed; the next step runs']);
    expect(log.lines.join('')).not.toContain('secret-canary');
  });

  it('escapes a component name in the log and leaves no timer behind', async () => {
    const { coordinator, clock, log } = setup({ timeoutMs: 100, minimumStepMs: 0 });
    coordinator.register({ component: 'a\n\u001b[31mFAKE', phase: 'runs', run: () => new Promise<void>(() => {}) });
    coordinator.register({ component: 'quick', phase: 'ledger', run: () => undefined });
    const done = coordinator.shutdown();
    await flush();
    clock.advance(100);
    await done;
    expect(log.lines[0]).toContain('"a\\u000a\\u001b[31mFAKE"');
    expect(clock.pendingTimers).toBe(0);
  });
});
