import { Inject, Injectable } from '@nestjs/common';
import { ReadinessIndicator, type ComponentHealthIndicator } from '../health/readiness-indicator.decorator';
import { indicatorResult, type ComponentHealthResult } from '../health/readiness-report';
import { ClusterInstance } from './cluster-instance';

/**
 * Readiness of this cluster instance: `up` while it holds its instance lock and every attached part
 * (cluster admission, the Postgres run store) has its LISTEN connection, with data
 * `{instance_live, admission_connected?, runs_connected?}`.
 */
@ReadinessIndicator('cluster')
@Injectable()
export class ClusterHealthIndicator implements ComponentHealthIndicator {
  constructor(@Inject(ClusterInstance) private readonly instance: ClusterInstance) {}

  isHealthy(key = 'cluster'): ComponentHealthResult {
    const report = this.instance.health();
    return indicatorResult(key, Object.values(report).every(Boolean), report);
  }
}
