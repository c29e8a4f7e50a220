import { ManualClock } from './manual-clock';
import { sleep, TimeoutError, within } from './timeout';

describe('within', () => {
  it('settles as the work does when it answers in time, and clears its timer', async () => {
    const clock = new ManualClock();
    expect(await within(Promise.resolve(7), 10, clock)).toBe(7);
    await expect(within(Promise.reject(new Error('x')), 10, clock)).rejects.toThrow('x');
    expect(clock.pendingTimers).toBe(0);
  });

  it('rejects with a TimeoutError, or what onTimeout builds, once the time has passed on the clock', async () => {
    const clock = new ManualClock();
    const slow = within(new Promise<never>(() => {}), 10, clock);
    const custom = within(new Promise<never>(() => {}), 20, clock, () => new RangeError('late'));
    clock.advance(9);
    let settled = false;
    slow.catch(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    clock.advance(1);
    await expect(slow).rejects.toBeInstanceOf(TimeoutError);
    await expect(slow).rejects.toMatchObject({ code: 'timeout', timeoutMs: 10 });
    clock.advance(10);
    await expect(custom).rejects.toBeInstanceOf(RangeError);
    expect(clock.pendingTimers).toBe(0);
  });
});

describe('sleep', () => {
  it('resolves after the delay on the clock', async () => {
    const clock = new ManualClock();
    let done = false;
    const sleeping = sleep(50, clock).then(() => (done = true));
    clock.advance(49);
    await Promise.resolve();
    expect(done).toBe(false);
    clock.advance(1);
    await sleeping;
    expect(done).toBe(true);
  });

  it('rejects with the abort reason when the signal aborts, clearing its timer', async () => {
    const clock = new ManualClock();
    const controller = new AbortController();
    const sleeping = sleep(50, clock, controller.signal);
    controller.abort(new Error('stop'));
    await expect(sleeping).rejects.toThrow('stop');
    expect(clock.pendingTimers).toBe(0);
    await expect(sleep(10, clock, controller.signal)).rejects.toThrow('stop');
    const bare = new AbortController();
    bare.abort();
    await expect(sleep(10, clock, bare.signal)).rejects.toMatchObject({ name: 'AbortError' });
  });
});
