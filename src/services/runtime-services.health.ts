import { Inject, Injectable } from '@nestjs/common';
import { ReadinessIndicator, type ComponentHealthIndicator } from '../health/readiness-indicator.decorator';
import { indicatorResult, type ComponentHealthResult } from '../health/readiness-report';
import { RuntimeServiceSupervisor } from './bundle/runtime-service-supervisor';

/**
 * Readiness of the runtime service bundle (spec 07 §8): up while a generation is `running`; down
 * while starting, restarting or `failed`. Data `{status, profile, generation, durability}`, where
 * `status` is terminus' `up` / `down` only (the supervisor's own state is in its `status()` record).
 * `disabled` is up.
 */
@ReadinessIndicator('runtime_services')
@Injectable()
export class RuntimeServicesHealthIndicator implements ComponentHealthIndicator {
  constructor(@Inject(RuntimeServiceSupervisor) private readonly supervisor: RuntimeServiceSupervisor) {}

  isHealthy(key = 'runtime_services'): ComponentHealthResult {
    const status = this.supervisor.status() as { generation?: unknown; durability?: unknown };
    const state = this.supervisor.state;
    return indicatorResult(key, state === 'running' || state === 'disabled', {
      profile: this.supervisor.profile,
      generation: typeof status.generation === 'number' ? status.generation : 0,
      durability: typeof status.durability === 'string' ? status.durability : null,
    });
  }
}
