import { Inject, Injectable } from '@nestjs/common';
import { ReadinessIndicator, type ComponentHealthIndicator } from '../health/readiness-indicator.decorator';
import { indicatorResult, type ComponentHealthResult } from '../health/readiness-report';
import { RuntimeServiceSupervisor } from './bundle/runtime-service-supervisor';

/**
 * Readiness of the runtime service bundle (spec 07 §8): up while a generation is `running`; down
 * while starting, restarting or `failed`. Data `{state, profile, generation, durability}` (`state`
 * where the spec says `status`, which the indicator's own up/down occupies). `disabled` is up.
 */
@ReadinessIndicator('runtime_services')
@Injectable()
export class RuntimeServicesHealthIndicator implements ComponentHealthIndicator {
  constructor(@Inject(RuntimeServiceSupervisor) private readonly supervisor: RuntimeServiceSupervisor) {}

  isHealthy(key = 'runtime_services'): ComponentHealthResult {
    const status = this.supervisor.status() as { status?: unknown; generation?: unknown; durability?: unknown };
    const state = this.supervisor.state;
    const up = state === 'running' || state === 'disabled';
    return indicatorResult(key, up, {
      state,
      profile: this.supervisor.profile,
      generation: typeof status.generation === 'number' ? status.generation : 0,
      durability: typeof status.durability === 'string' ? status.durability : null,
    });
  }
}
