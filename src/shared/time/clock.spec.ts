import { performance } from 'node:perf_hooks';
import { MAX_TIMER_DELAY_MS, systemClock } from './clock';

describe('systemClock', () => {
  afterEach(() => jest.restoreAllMocks());

  it('reads performance.now() and Date.now()', () => {
    const before = performance.now();
    const mono = systemClock.monotonicNow();
    expect(mono).toBeGreaterThanOrEqual(before);
    expect(mono).toBeLessThanOrEqual(performance.now());
    expect(Math.abs(systemClock.wallNow() - Date.now())).toBeLessThan(1000);
  });

  it('clamps delays to 2^31 − 1 ms and to at least 0, and unrefs the timer', () => {
    const spy = jest.spyOn(global, 'setTimeout');
    const far = systemClock.setTimer(() => {}, 2 ** 40) as NodeJS.Timeout;
    const negative = systemClock.setTimer(() => {}, -5) as NodeJS.Timeout;
    expect(spy.mock.calls.map((call) => call[1])).toEqual([MAX_TIMER_DELAY_MS, 0]);
    expect(far.hasRef()).toBe(false);
    systemClock.clearTimer(far);
    systemClock.clearTimer(negative);
  });

  it('runs the callback and can be cleared', async () => {
    let ran = 0;
    const cleared = systemClock.setTimer(() => ran++, 0);
    systemClock.clearTimer(cleared);
    await new Promise<void>((resolve) => systemClock.setTimer(resolve, 1));
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(ran).toBe(0);
  });

  it('is frozen', () => {
    expect(Object.isFrozen(systemClock)).toBe(true);
  });
});
