import { Inject, Injectable } from '@nestjs/common';
import { ReadinessIndicator, type ComponentHealthIndicator } from '../health/readiness-indicator.decorator';
import { indicatorResult, type ComponentHealthResult } from '../health/readiness-report';
import type { AdmissionService } from './admission-service';
import { ADMISSION_SERVICE } from './admission.constants';

/**
 * Readiness of admission: `down` while draining, `up` otherwise, with data
 * `{draining, active, queued, available}`. `AdmissionModule` provides and exports it, and
 * `ReadinessService` asks it; it answers in terminus' `HealthIndicatorResult` shape, so it also
 * serves a `HealthCheckService.check([...])` of your own.
 */
@ReadinessIndicator('admission')
@Injectable()
export class AdmissionHealthIndicator implements ComponentHealthIndicator {
  constructor(@Inject(ADMISSION_SERVICE) private readonly controller: AdmissionService) {}

  isHealthy(key = 'admission'): ComponentHealthResult {
    const status = this.controller.status();
    const data = { draining: status.draining, active: status.active, queued: status.queue_length, available: status.available };
    return indicatorResult(key, !status.draining, data);
  }
}
