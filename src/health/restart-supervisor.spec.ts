import { ManualClock } from '../shared/time/manual-clock';
import { RestartSupervisor } from './restart-supervisor';

/** A supervisor on a manual clock whose restarts fail while `failing` is true; `at` lists when each attempt ran. */
function supervised(failing: () => boolean) {
  const clock = new ManualClock(0);
  const at: number[] = [];
  const supervisor = new RestartSupervisor({
    clock,
    restart: async () => {
      at.push(clock.monotonicNow());
      if (failing()) throw new Error('still down');
    },
  });
  return { clock, at, supervisor };
}

/** Lets the attempt's promise chain settle after a timer fired. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** Advances in whole seconds, so an attempt's follow-up is scheduled at the second it ran. */
async function advance(clock: ManualClock, ms: number, step = 1000): Promise<void> {
  for (let moved = 0; moved < ms; moved += step) {
    clock.advance(Math.min(step, ms - moved));
    await settle();
  }
}

describe('RestartSupervisor (conventions, Health and shutdown: 1 s doubling to 30 s)', () => {
  it('the first attempt runs 1 s after the stop, failed ones double the pause up to 30 s', async () => {
    let down = true;
    const { clock, at, supervisor } = supervised(() => down);
    supervisor.stopped();
    await advance(clock, 999);
    expect(at).toEqual([]);
    await advance(clock, 1);
    await advance(clock, 100_000);
    const pauses = at.map((time, i) => time - (i === 0 ? 0 : at[i - 1]));
    expect(pauses.slice(0, 7)).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
    down = false;
    await advance(clock, 30_000);
    expect(supervisor.restarts).toBe(1);
    expect(supervisor.pending).toBe(false);
  });

  it('a successful restart resets the pause to 1 s, and repeated stops schedule one attempt', async () => {
    let down = true;
    const { clock, at, supervisor } = supervised(() => down);
    supervisor.stopped();
    await advance(clock, 3000);
    expect(at).toEqual([1000, 3000]);
    down = false;
    await advance(clock, 4000);
    expect(at).toEqual([1000, 3000, 7000]);
    supervisor.stopped();
    supervisor.stopped();
    await advance(clock, 1000);
    expect(at).toEqual([1000, 3000, 7000, 8000]);
    expect(supervisor.restarts).toBe(2);
  });

  it('a generation that stops again while its start settles counts as failed: the next attempt follows', async () => {
    const clock = new ManualClock(0);
    const at: number[] = [];
    const supervisor: RestartSupervisor = new RestartSupervisor({
      clock,
      restart: async () => {
        at.push(clock.monotonicNow());
        if (at.length === 1) supervisor.stopped();
      },
    });
    supervisor.stopped();
    await advance(clock, 4000);
    expect(at).toEqual([1000, 3000]);
    expect(supervisor.restarts).toBe(1);
  });

  it('close() cancels the scheduled attempt and refuses later stops (shutdown)', async () => {
    const { clock, at, supervisor } = supervised(() => true);
    supervisor.stopped();
    supervisor.close();
    supervisor.stopped();
    await advance(clock, 60_000);
    expect(at).toEqual([]);
    expect(clock.pendingTimers).toBe(0);
  });
});
