import type { Clock } from '../../shared/time/clock';
import { RuntimeServiceError } from '../runtime-service.errors';
import { isTokenId } from '../../shared/ids/id-rule';
import type { OutboxDeliveryTarget } from './outbox.types';

/**
 * The delivery targets of one outbox by adapter id. It is hydrated once the generation has
 * registered a first adapter; until then nothing is claimed (the hydration barrier, spec 07 §6.4).
 */
export class OutboxRegistry {
  readonly #targets = new Map<string, OutboxDeliveryTarget>();
  readonly #waiters = new Set<() => void>();

  /** Registers (or replaces) the target of `adapterId` (`^[A-Za-z0-9._:-]{1,128}$`, else a `TypeError`). */
  register(adapterId: string, target: OutboxDeliveryTarget): void {
    if (!isTokenId(adapterId)) throw new TypeError('adapterId must match ^[A-Za-z0-9._:-]{1,128}$');
    if (typeof target?.addEvents !== 'function') throw new TypeError('target must have an addEvents method');
    this.#targets.set(adapterId, target);
    for (const wake of [...this.#waiters]) wake();
  }

  /** The target of `adapterId`, if registered. */
  target(adapterId: string): OutboxDeliveryTarget | undefined {
    return this.#targets.get(adapterId);
  }

  /** The registered adapter ids, sorted: the only jobs a claim considers. */
  ids(): string[] {
    return [...this.#targets.keys()].sort();
  }

  get hydrated(): boolean {
    return this.#targets.size > 0;
  }

  /**
   * Resolves once hydrated; rejects with `runtime_service_bundle_start_failed` (stage
   * `memory_outbox`, reason `memory_outbox_registry_not_hydrated`) after `timeoutMs`.
   */
  waitHydrated(timeoutMs: number, clock: Clock): Promise<void> {
    if (this.hydrated) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const wake = () => {
        this.#waiters.delete(wake);
        clock.clearTimer(timer);
        resolve();
      };
      const timer = clock.setTimer(() => {
        this.#waiters.delete(wake);
        reject(new RuntimeServiceError('runtime_service_bundle_start_failed', { stage: 'memory_outbox', reason: 'memory_outbox_registry_not_hydrated' }));
      }, timeoutMs);
      this.#waiters.add(wake);
    });
  }
}
