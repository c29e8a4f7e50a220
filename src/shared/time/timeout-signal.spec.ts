import { ManualClock } from './manual-clock';
import { timeoutSignal } from './timeout-signal';

describe('timeoutSignal', () => {
  it('aborts with the timeout reason once the time has passed on the clock', () => {
    const clock = new ManualClock();
    const bound = timeoutSignal(new AbortController().signal, 100, clock, 'case_timeout');
    clock.advance(99);
    expect(bound.signal.aborted).toBe(false);
    clock.advance(1);
    expect(bound.signal.aborted).toBe(true);
    expect(bound.signal.reason).toBe('case_timeout');
    expect(bound.timedOut).toBe(true);
  });

  it('aborts with the parent reason when the parent aborts first, and clears its timer', () => {
    const clock = new ManualClock();
    const parent = new AbortController();
    const bound = timeoutSignal(parent.signal, 100, clock, 'case_timeout');
    parent.abort('user_cancelled');
    expect(bound.signal.reason).toBe('user_cancelled');
    expect(bound.timedOut).toBe(false);
    expect(clock.pendingTimers).toBe(0);
    clock.advance(200);
    expect(bound.signal.reason).toBe('user_cancelled');
  });

  it('is aborted from the start when the parent already is, and schedules nothing', () => {
    const clock = new ManualClock();
    const parent = new AbortController();
    parent.abort('gone');
    const bound = timeoutSignal(parent.signal, 100, clock, 'case_timeout');
    expect(bound.signal.aborted).toBe(true);
    expect(bound.signal.reason).toBe('gone');
    expect(clock.pendingTimers).toBe(0);
  });

  it('never times out without a timeout, and works without a parent', () => {
    const clock = new ManualClock();
    const unbounded = timeoutSignal(undefined, undefined, clock, 'case_timeout');
    expect(clock.pendingTimers).toBe(0);
    clock.advance(1e9);
    expect(unbounded.signal.aborted).toBe(false);
    const orphan = timeoutSignal(undefined, 5, clock, 'case_timeout');
    clock.advance(5);
    expect(orphan.timedOut).toBe(true);
  });

  it('dispose clears the timer and detaches from the parent, leaving the signal as it was', () => {
    const clock = new ManualClock();
    const parent = new AbortController();
    const bound = timeoutSignal(parent.signal, 100, clock, 'case_timeout');
    bound.dispose();
    bound.dispose();
    expect(clock.pendingTimers).toBe(0);
    parent.abort('late');
    clock.advance(200);
    expect(bound.signal.aborted).toBe(false);
    expect(bound.timedOut).toBe(false);
  });
});
