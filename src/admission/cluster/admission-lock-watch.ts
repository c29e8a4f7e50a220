import type { ClusterInstance } from '../../cluster/cluster-instance';

/**
 * The instance lock as cluster admission sees it (spec 08 §2, with the lock grace). Lost: peers now
 * see the instance as dead and will reap its rows, so its queued requests fail at once and nothing
 * new is admitted. Lapsed (not confirmed within the grace): its permits are revoked too, by its own
 * clock, before peers may reuse their capacity; until the lock is confirmed again nothing here may
 * hold a permit. Events after the controller stopped are ignored.
 */
export class AdmissionLockWatch {
  private lapsedNow = false;
  private readonly stopWatching: () => void;

  constructor(
    private readonly instance: ClusterInstance,
    react: (event: 'lost' | 'lapsed') => void,
    stopped: () => boolean,
  ) {
    this.stopWatching = instance.onLockEvent((event) => {
      if (event === 'confirmed') this.lapsedNow = false;
      if (event === 'confirmed' || stopped()) return;
      if (event === 'lapsed') this.lapsedNow = true;
      react(event);
    });
  }

  /** True from a lapse until the lock is confirmed again. */
  get lapsed(): boolean {
    return this.lapsedNow;
  }

  /** Whether the instance holds its lock; a lapse its timer has not reported yet is reported first. */
  check(): boolean {
    return this.instance.checkLock();
  }

  close(): void {
    this.stopWatching();
  }
}
