import { Inject, Injectable } from '@nestjs/common';
import { ReadinessIndicator, type ComponentHealthIndicator } from '../health/readiness-indicator.decorator';
import { indicatorResult, type ComponentHealthResult } from '../health/readiness-report';
import { EvalService } from './service/eval-service';

/** How long the ownership connection has to answer `SELECT 1`. */
export const EVAL_HEALTH_TIMEOUT_MS = 1000;

/**
 * Health of the evaluation service (spec 05 §10). Readiness (`isHealthy`): up only while `running`
 * with the ownership locks held and their connection answering; a `standby` service is down. Data
 * `{state, identity_source, active_jobs, queued_jobs, recovered_jobs}` (`state` rather than the
 * spec's `status`, which the indicator's own `up`/`down` occupies). It is never part of liveness
 * (conventions, "Health and shutdown"): a stopped service is restarted in-process by its module.
 */
@ReadinessIndicator('evaluation')
@Injectable()
export class EvalServiceHealthIndicator implements ComponentHealthIndicator {
  constructor(@Inject(EvalService) private readonly service: EvalService) {}

  async isHealthy(key = 'evaluation'): Promise<ComponentHealthResult> {
    const up = await this.service.isHealthy(EVAL_HEALTH_TIMEOUT_MS);
    const c = this.service.capabilities();
    return indicatorResult(key, up, {
      state: c.status,
      identity_source: c.identity_source,
      active_jobs: c.active_jobs,
      queued_jobs: c.queued_jobs,
      recovered_jobs: c.recovered_jobs,
    });
  }
}
