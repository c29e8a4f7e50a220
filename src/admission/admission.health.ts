import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { AdmissionController } from './admission-controller';

/**
 * Readiness of admission: `down` while draining, `up` otherwise, with data
 * `{draining, active, queued, available}`. List it as a provider next to `TerminusModule`.
 */
@Injectable()
export class AdmissionHealthIndicator {
  constructor(
    private readonly controller: AdmissionController,
    private readonly health: HealthIndicatorService,
  ) {}

  isHealthy(key = 'admission'): HealthIndicatorResult {
    const status = this.controller.status();
    const data = { draining: status.draining, active: status.active, queued: status.queue_length, available: status.available };
    const indicator = this.health.check(key);
    return status.draining ? indicator.down(data) : indicator.up(data);
  }
}
