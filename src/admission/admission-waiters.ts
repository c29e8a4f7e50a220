import type { Clock } from '../shared/time/clock';
import { DeadlineTimer } from '../shared/time/deadline-timer';
import { handled } from '../shared/async/handled-promise';
import type { Waiter } from './admission-queue';
import type { AdmissionRequestOptions } from './admission-request';
import { withSignalAsOwner } from './admission-request';
import { AdmissionError } from './admission.errors';
import type { AdmissionStatus } from './admission.types';
import type { Permit } from './permit';
import type { PermitSource } from './admission-service';

/** A request that can be waited for: its waiters, `null` once it settled. */
export interface AwaitableRequest {
  waiters: Waiter[] | null;
}

/**
 * Adds a waiter for `await(ref, timeoutMs)` (spec 01 §5.5): settled with the request's outcome, or
 * rejected with `await_timeout` (and removed, leaving the request as it is) when `timeoutMs` passes.
 */
export function addTimedWaiter(
  request: AwaitableRequest,
  clock: Clock,
  timeoutMs: number | 'infinity',
  resolve: (permit: Permit) => void,
  reject: (reason: unknown) => void,
): void {
  if (timeoutMs === 'infinity' || timeoutMs === Infinity) {
    (request.waiters ??= []).push({ resolve, reject });
    return;
  }
  const waiter: Waiter = {
    resolve: (permit) => (timer.clear(), resolve(permit)),
    reject: (reason) => (timer.clear(), reject(reason)),
  };
  const timer = new DeadlineTimer(clock, () => {
    if (request.waiters) request.waiters = request.waiters.filter((other) => other !== waiter);
    reject(new AdmissionError('await_timeout'));
  });
  (request.waiters ??= []).push(waiter);
  timer.arm(clock.monotonicNow() + timeoutMs);
}

/** Who waits for a drain: `drain()` callers, told the status once the last permit went. */
export class DrainWaiters {
  private waiters: Array<(status: AdmissionStatus) => void> = [];

  /** A promise of the drained status, or `drain_timeout` (`{active}`) once `timeoutMs` passes on `clock`. */
  wait(clock: Clock, timeoutMs: number, active: () => number): Promise<AdmissionStatus> {
    return handled(
      new Promise<AdmissionStatus>((resolve, reject) => {
        const timer = new DeadlineTimer(clock, () => {
          this.waiters = this.waiters.filter((waiter) => waiter !== onDrained);
          reject(new AdmissionError('drain_timeout', { active: active() }));
        });
        const onDrained = (drained: AdmissionStatus) => {
          timer.clear();
          resolve(drained);
        };
        this.waiters.push(onDrained);
        timer.arm(clock.monotonicNow() + timeoutMs);
      }),
    );
  }

  get waiting(): boolean {
    return this.waiters.length > 0;
  }

  /** Hands the waiters over for notification with `status` (as an effect of the operation). */
  take(): Array<(status: AdmissionStatus) => void> {
    const waiters = this.waiters;
    this.waiters = [];
    return waiters;
  }
}

/** Spec 01 §5.7 on any controller: acquire (the signal doubling as owner), run `fn`, release on every path. */
export async function runUnderPermit<T>(
  controller: PermitSource,
  agentId: string,
  fn: (permit: Permit, signal: AbortSignal) => T | Promise<T>,
  opts?: AdmissionRequestOptions,
): Promise<T> {
  if (typeof fn !== 'function') throw new AdmissionError('invalid_admission_options', { field: 'fn' });
  const permit = await controller.acquire(agentId, withSignalAsOwner(opts));
  try {
    return await fn(permit, permit.signal);
  } finally {
    const released = controller.release(permit);
    // an asynchronous release of some other PermitSource must not leave a rejection unhandled
    if (typeof released !== 'boolean') released.catch(() => undefined);
  }
}
