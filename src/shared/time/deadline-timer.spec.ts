import { ManualClock } from './manual-clock';
import { MAX_TIMER_DELAY_MS } from './clock';
import { DeadlineTimer } from './deadline-timer';

function setup() {
  const clock = new ManualClock(1000);
  const delays: number[] = [];
  const setTimer = clock.setTimer.bind(clock);
  jest.spyOn(clock, 'setTimer').mockImplementation((fn, ms) => (delays.push(ms), setTimer(fn, ms)));
  let fired = 0;
  const timer = new DeadlineTimer(clock, () => fired++);
  return { clock, delays, timer, fired: () => fired };
}

describe('DeadlineTimer', () => {
  it('fires once at the absolute deadline and is idle afterwards', () => {
    const { clock, timer, fired } = setup();
    timer.arm(1250);
    clock.advance(249);
    expect(fired()).toBe(0);
    clock.advance(1);
    expect(fired()).toBe(1);
    expect(timer.deadline).toBe(Infinity);
    clock.advance(10_000);
    expect(fired()).toBe(1);
    expect(clock.pendingTimers).toBe(0);
  });

  it('replaces an earlier arming and keeps a single clock timer', () => {
    const { clock, timer, fired } = setup();
    timer.arm(1500);
    timer.arm(1100);
    expect(clock.pendingTimers).toBe(1);
    clock.advance(100);
    expect(fired()).toBe(1);
    clock.advance(1000);
    expect(fired()).toBe(1);
  });

  it('does not reschedule when armed again for the same deadline', () => {
    const { timer, delays } = setup();
    timer.arm(1500);
    timer.arm(1500);
    expect(delays).toEqual([500]);
  });

  it('disarms on Infinity and on clear', () => {
    const { clock, timer, fired } = setup();
    timer.arm(1100);
    timer.arm(Infinity);
    expect(clock.pendingTimers).toBe(0);
    timer.arm(1100);
    timer.clear();
    expect(clock.pendingTimers).toBe(0);
    clock.advance(1000);
    expect(fired()).toBe(0);
  });

  it('fires at once (delay 0) for a deadline already past', () => {
    const { clock, timer, delays, fired } = setup();
    timer.arm(900);
    expect(delays).toEqual([0]);
    clock.advance(0);
    expect(fired()).toBe(1);
  });

  it('re-arms for the remainder when the clock fires it early', () => {
    const clock = new ManualClock(1000);
    const earlyClock = { ...clockFns(clock), setTimer: (fn: () => void, ms: number) => clock.setTimer(fn, ms / 2) };
    let fired = 0;
    const timer = new DeadlineTimer(earlyClock, () => fired++);
    timer.arm(1400);
    clock.advance(200);
    expect(fired).toBe(0);
    expect(clock.pendingTimers).toBe(1);
    clock.advance(199);
    expect(fired).toBe(0);
    clock.advance(1);
    expect(fired).toBe(1);
    expect(clock.pendingTimers).toBe(0);
  });

  it('clamps every delay to 2^31 − 1 ms and keeps waiting across clamped periods', () => {
    const { clock, timer, delays, fired } = setup();
    const far = 1000 + 3 * MAX_TIMER_DELAY_MS + 5;
    timer.arm(far);
    expect(delays).toEqual([MAX_TIMER_DELAY_MS]);
    clock.advance(MAX_TIMER_DELAY_MS);
    expect(fired()).toBe(0);
    clock.advance(2 * MAX_TIMER_DELAY_MS);
    expect(fired()).toBe(0);
    clock.advance(5);
    expect(fired()).toBe(1);
    expect(delays).toEqual([MAX_TIMER_DELAY_MS, MAX_TIMER_DELAY_MS, MAX_TIMER_DELAY_MS, 5]);
  });
});

function clockFns(clock: ManualClock) {
  return {
    monotonicNow: () => clock.monotonicNow(),
    wallNow: () => clock.wallNow(),
    setTimer: (fn: () => void, ms: number) => clock.setTimer(fn, ms),
    clearTimer: (handle: unknown) => clock.clearTimer(handle),
  };
}
