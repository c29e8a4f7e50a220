import { ManualClock } from './manual-clock';
import { exponentialBackoff, retry } from './retry';

const flush = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

describe('retry', () => {
  it('retries a retryable failure after the pause on the clock, up to the attempts, then throws the last failure', async () => {
    const clock = new ManualClock();
    const seen: Array<[number, number]> = [];
    const run = retry(
      async (attempt) => {
        seen.push([attempt, clock.monotonicNow()]);
        throw new Error(`failure ${attempt}`);
      },
      { attempts: 3, delayMs: 500, retryable: () => true },
      clock,
    );
    let outcome: unknown;
    run.catch((error: unknown) => (outcome = error));
    for (let i = 0; i < 4; i++) {
      await flush();
      clock.advance(500);
    }
    await flush();
    expect(seen).toEqual([[1, 1000], [2, 1500], [3, 2000]]);
    expect((outcome as Error).message).toBe('failure 3');
    expect(clock.pendingTimers).toBe(0);
  });

  it('throws a failure that is not retryable at once, and answers the first success', async () => {
    const clock = new ManualClock();
    let calls = 0;
    await expect(retry(async () => (calls++, Promise.reject(new TypeError('bug'))), { attempts: 5, delayMs: 1, retryable: (e) => !(e instanceof TypeError) }, clock)).rejects.toBeInstanceOf(TypeError);
    expect(calls).toBe(1);
    expect(await retry(async (attempt) => attempt, { attempts: 5, delayMs: 1, retryable: () => true }, clock)).toBe(1);
  });

  it('starts no retry whose pause would end after maxElapsedMs', async () => {
    const clock = new ManualClock();
    let calls = 0;
    const run = retry(async () => (calls++, Promise.reject(new Error('down'))), { attempts: 10, delayMs: exponentialBackoff(100, 1000), maxElapsedMs: 700, retryable: () => true }, clock);
    let failed = false;
    run.catch(() => (failed = true));
    for (let i = 0; i < 10; i++) {
      await flush();
      clock.advance(100);
    }
    await flush();
    // pauses 100 + 200 + 400 = 700 fit; the next (800) would not
    expect(calls).toBe(4);
    expect(failed).toBe(true);
  });

  it('an aborted signal ends the pause and throws the last failure', async () => {
    const clock = new ManualClock();
    const controller = new AbortController();
    const run = retry(async () => Promise.reject(new Error('down')), { attempts: 10, delayMs: 1000, retryable: () => true, signal: controller.signal }, clock);
    await flush();
    controller.abort();
    await expect(run).rejects.toThrow('down');
    expect(clock.pendingTimers).toBe(0);
  });
});

describe('exponentialBackoff', () => {
  it('doubles from the initial pause and stops at the maximum', () => {
    const backoff = exponentialBackoff(100, 1000);
    expect([1, 2, 3, 4, 5, 6].map(backoff)).toEqual([100, 200, 400, 800, 1000, 1000]);
  });
});
