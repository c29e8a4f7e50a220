import { Injectable } from '@nestjs/common';
import type { HealthIndicatorResult } from '@nestjs/terminus';
import { ReadinessIndicator, type ComponentHealthIndicator } from '../health/readiness-indicator.decorator';
import { indicatorResult } from '../health/readiness-report';
import { AdmissionController } from './admission-controller';

/**
 * Readiness of admission: `down` while draining, `up` otherwise, with data
 * `{draining, active, queued, available}`. `AdmissionModule` provides and exports it, and
 * `ReadinessService` asks it; it answers in terminus' `HealthIndicatorResult` shape, so it also
 * serves a `HealthCheckService.check([...])` of your own.
 */
@ReadinessIndicator('admission')
@Injectable()
export class AdmissionHealthIndicator implements ComponentHealthIndicator {
  constructor(private readonly controller: AdmissionController) {}

  isHealthy(key = 'admission'): HealthIndicatorResult {
    const status = this.controller.status();
    const data = { draining: status.draining, active: status.active, queued: status.queue_length, available: status.available };
    return indicatorResult(key, !status.draining, data) as HealthIndicatorResult;
  }
}
