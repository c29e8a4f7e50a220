import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { InvocationLedger } from './invocation-ledger';

/** How long the pool and the lock connection have to answer `SELECT 1`. */
export const LEDGER_HEALTH_TIMEOUT_MS = 1000;

/**
 * Readiness of the invocation ledger (spec 04 §8): `up` when the ledger is started, holds its
 * instance lock, and the pool and the lock connection answer `SELECT 1` within 1000 ms; `down`
 * otherwise. Data `{lock_held}`, never error text. List it as a provider next to `TerminusModule`.
 */
@Injectable()
export class LedgerHealthIndicator {
  constructor(
    private readonly ledger: InvocationLedger,
    private readonly health: HealthIndicatorService,
  ) {}

  async isHealthy(key = 'invocation_ledger'): Promise<HealthIndicatorResult> {
    const healthy = await this.ledger.isHealthy(LEDGER_HEALTH_TIMEOUT_MS);
    const indicator = this.health.check(key);
    const data = { lock_held: this.ledger.lockHeld };
    return healthy ? indicator.up(data) : indicator.down(data);
  }
}
