import { Injectable } from '@nestjs/common';
import { ReadinessIndicator, type ComponentHealthIndicator } from '../health/readiness-indicator.decorator';
import { indicatorResult, type ComponentHealthResult } from '../health/readiness-report';
import { InvocationLedger } from './invocation-ledger';

/** How long the pool and the lock connection have to answer `SELECT 1`. */
export const LEDGER_HEALTH_TIMEOUT_MS = 1000;

/**
 * Readiness of the invocation ledger (spec 04 §8): `up` when the ledger is started, holds its
 * instance lock, and the pool and the lock connection answer `SELECT 1` within 1000 ms; `down`
 * otherwise. Data `{lock_held}`, never error text. `LedgerModule` provides and exports it, and
 * `ReadinessService` asks it; it answers in terminus' `HealthIndicatorResult` shape.
 */
@ReadinessIndicator('invocation_ledger')
@Injectable()
export class LedgerHealthIndicator implements ComponentHealthIndicator {
  constructor(private readonly ledger: InvocationLedger) {}

  async isHealthy(key = 'invocation_ledger'): Promise<ComponentHealthResult> {
    const healthy = await this.ledger.isHealthy(LEDGER_HEALTH_TIMEOUT_MS);
    return indicatorResult(key, healthy, { lock_held: this.ledger.lockHeld });
  }
}
