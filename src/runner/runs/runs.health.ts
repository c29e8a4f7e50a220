import { Injectable } from '@nestjs/common';
import { ReadinessIndicator, type ComponentHealthIndicator } from '../../health/readiness-indicator.decorator';
import { indicatorResult, type ComponentHealthResult } from '../../health/readiness-report';
import { RunRegistry } from './run-registry';

/**
 * Readiness of the run registry: `down` once its shutdown began (it takes no new runs), `up`
 * otherwise, with data `{accepting, active}`. `RunsModule` provides and exports it, and
 * `ReadinessService` asks it; it answers in terminus' `HealthIndicatorResult` shape.
 */
@ReadinessIndicator('runs')
@Injectable()
export class RunsHealthIndicator implements ComponentHealthIndicator {
  constructor(private readonly registry: RunRegistry) {}

  isHealthy(key = 'runs'): ComponentHealthResult {
    const status = this.registry.status();
    return indicatorResult(key, status.accepting, { accepting: status.accepting, active: status.active });
  }
}
