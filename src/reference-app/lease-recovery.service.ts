import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { systemClock, type Clock } from '../shared/time/clock';
import { InvocationLedger } from '../ledger/invocation-ledger';
import { LedgerError } from '../ledger/ledger.errors';

/** Settings of the reference service's sweep of expired leases. */
export interface LeaseRecoverySettings {
  /** Pause between sweeps. @default `LEASE_RECOVERY_INTERVAL_MS` or 30000 */
  readonly intervalMs: number;
  /** Rows one `recoverExpired` call ends (1..1000). @default 100 */
  readonly batchSize: number;
  /** Calls one sweep makes at most, so a sweep stays bounded. @default 10 */
  readonly maxBatches: number;
  /** @default systemClock */
  readonly clock: Clock;
}

/** Injection token of the {@link LeaseRecoverySettings}. */
export const LEASE_RECOVERY_SETTINGS = Symbol('LEASE_RECOVERY_SETTINGS');

/** The settings from the environment (`LEASE_RECOVERY_INTERVAL_MS`). */
export function leaseRecoverySettings(env: NodeJS.ProcessEnv = process.env): LeaseRecoverySettings {
  const interval = Number(env.LEASE_RECOVERY_INTERVAL_MS ?? 30_000);
  return Object.freeze({ intervalMs: Number.isSafeInteger(interval) && interval > 0 ? interval : 30_000, batchSize: 100, maxBatches: 10, clock: systemClock });
}

/**
 * Ends the invocations whose lease expired without their owner (a crashed instance, an outage
 * that ate the final `finish`): marks them `failed` with reason `lease_expired` through
 * `ledger.recoverExpired`, once at start and then every `intervalMs` on the clock. Logs counts only.
 */
@Injectable()
export class LeaseRecoveryService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('LeaseRecovery');
  private timer: unknown = undefined;
  private sweeping: Promise<number> | null = null;
  private stopped = false;

  constructor(
    @Inject(InvocationLedger) private readonly ledger: InvocationLedger,
    @Inject(LEASE_RECOVERY_SETTINGS) private readonly settings: LeaseRecoverySettings,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.sweep();
    this.schedule();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.settings.clock.clearTimer(this.timer);
    this.timer = undefined;
    await this.sweeping;
  }

  /** One sweep: `recoverExpired` until a batch comes back short or `maxBatches` calls; resolves the count. */
  sweep(): Promise<number> {
    this.sweeping ??= this.sweepOnce().finally(() => (this.sweeping = null));
    return this.sweeping;
  }

  private async sweepOnce(): Promise<number> {
    let recovered = 0;
    try {
      for (let batch = 0; batch < this.settings.maxBatches && !this.stopped; batch += 1) {
        const ids = await this.ledger.recoverExpired({ limit: this.settings.batchSize });
        recovered += ids.length;
        if (ids.length < this.settings.batchSize) break;
      }
    } catch (error) {
      const code = LedgerError.isLedgerError(error) ? error.code : 'unexpected_error';
      // a closing ledger refuses calls: the service is shutting down, nothing to report
      if (code !== 'invalid_ledger_handle') this.logger.warn(`lease recovery failed: ${code}; recovered ${recovered} before`);
      return recovered;
    }
    if (recovered > 0) this.logger.log(`recovered ${recovered} invocations whose lease had expired`);
    return recovered;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.settings.clock.setTimer(() => {
      this.timer = undefined;
      void this.sweep().then(() => this.schedule());
    }, this.settings.intervalMs);
  }
}

/** What the reference module registers: the settings from the environment and the service. */
export const leaseRecoveryProviders: Provider[] = [
  { provide: LEASE_RECOVERY_SETTINGS, useFactory: () => leaseRecoverySettings() },
  LeaseRecoveryService,
];
