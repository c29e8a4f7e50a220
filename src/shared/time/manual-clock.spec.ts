import { ManualClock } from './manual-clock';

describe('ManualClock', () => {
  it('starts at 1000 by default and moves only through advance', () => {
    const clock = new ManualClock();
    expect(clock.monotonicNow()).toBe(1000);
    clock.advance(250);
    expect(clock.monotonicNow()).toBe(1250);
    expect(clock.wallNow() - clock.monotonicNow()).toBe(new ManualClock(0).wallNow());
  });

  it('fires due timers in due order, ties in scheduling order, with the time of each timer', () => {
    const clock = new ManualClock(0);
    const seen: Array<[string, number]> = [];
    clock.setTimer(() => seen.push(['b', clock.monotonicNow()]), 20);
    clock.setTimer(() => seen.push(['a', clock.monotonicNow()]), 10);
    clock.setTimer(() => seen.push(['c', clock.monotonicNow()]), 20);
    clock.setTimer(() => seen.push(['late', clock.monotonicNow()]), 31);
    clock.advance(30);
    expect(seen).toEqual([['a', 10], ['b', 20], ['c', 20]]);
    expect(clock.monotonicNow()).toBe(30);
    expect(clock.pendingTimers).toBe(1);
  });

  it('fires timers scheduled by timers within the same advance', () => {
    const clock = new ManualClock(0);
    const seen: number[] = [];
    clock.setTimer(() => clock.setTimer(() => seen.push(clock.monotonicNow()), 5), 5);
    clock.advance(10);
    expect(seen).toEqual([10]);
  });

  it('clears timers, counts pending ones and treats bad delays as 0 and huge ones as 1 ms', () => {
    const clock = new ManualClock(0);
    let fired = 0;
    const handle = clock.setTimer(() => fired++, 5);
    clock.setTimer(() => fired++, -3);
    clock.setTimer(() => fired++, NaN);
    clock.setTimer(() => fired++, 2 ** 31);
    expect(clock.pendingTimers).toBe(4);
    clock.clearTimer(handle);
    clock.advance(0);
    expect(fired).toBe(2);
    clock.advance(1);
    expect(fired).toBe(3);
    expect(clock.pendingTimers).toBe(0);
    expect(() => clock.advance(-1)).toThrow(RangeError);
  });
});
