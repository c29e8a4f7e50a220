import type { Clock } from '../../shared/time/clock';
import { DeadlineTimer } from '../../shared/time/deadline-timer';
import { handled, rejectedWith } from '../../shared/async/handled-promise';
import { withSignalAsOwner, type AdmissionRequestOptions } from '../admission-request';
import type { PermitSource } from '../admission-service';
import { AdmissionError } from '../admission.errors';
import type { AdmissionStatus } from '../admission.types';
import type { Permit } from '../permit';

/** How many failures of queued requests `await` remembers (spec 01 §5.5). */
const RECENT_FAILURES = 1024;

/** The reasons of the most recently failed queued requests, for `await`; the oldest is forgotten first. */
export class RecentFailures {
  private readonly reasons = new Map<string, unknown>();

  remember(ref: string, reason: unknown): void {
    this.reasons.set(ref, reason);
    if (this.reasons.size > RECENT_FAILURES) this.reasons.delete(this.reasons.keys().next().value as string);
  }

  /** What `await` answers for a ref the controller no longer tracks: the remembered failure, else `not_found`. */
  answer(ref: string): Promise<Permit> {
    return rejectedWith(this.reasons.has(ref) ? this.reasons.get(ref) : new AdmissionError('not_found'));
  }
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
