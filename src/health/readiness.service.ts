import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService, Reflector } from '@nestjs/core';
import { systemClock, type Clock } from '../shared/time/clock';
import { within } from '../shared/time/timeout';
import { AGENT_RUNTIME_HEALTH_OPTIONS, type ResolvedHealthOptions } from './health-options';
import { READINESS_COMPONENT, type ComponentHealthIndicator } from './readiness-indicator.decorator';
import { componentStates, down, readinessReport, type ComponentHealth, type ReadinessReport } from './readiness-report';
import { ShutdownCoordinator } from './shutdown-coordinator';

interface FoundIndicator {
  readonly component: string;
  readonly indicator: ComponentHealthIndicator;
}

/**
 * Readiness of every configured component (conventions, "Health and shutdown"): asks each
 * `@ReadinessIndicator` the application provides, each bounded by `readinessTimeoutMs`, and answers
 * in terminus' shape. While the application shuts down it still names every component, with
 * `shutdown: {status: 'down', phase}` beside them, so readiness is down from the first step on.
 */
@Injectable()
export class ReadinessService implements OnApplicationBootstrap {
  private indicators: readonly FoundIndicator[] | null = null;
  private readonly clock: Clock;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly reflector: Reflector,
    private readonly coordinator: ShutdownCoordinator,
    @Inject(AGENT_RUNTIME_HEALTH_OPTIONS) private readonly options: ResolvedHealthOptions,
  ) {
    this.clock = options.clock ?? systemClock;
  }

  onApplicationBootstrap(): void {
    this.indicators = this.discover();
  }

  /** The components found, sorted. */
  components(): readonly string[] {
    return [...new Set(this.found().map((found) => found.component))].sort();
  }

  /** One readiness check: `status: 'ok'` (HTTP 200) when every component is up, `'error'` (503) otherwise. */
  async check(): Promise<ReadinessReport> {
    const answers = await Promise.all(this.found().map((found) => this.ask(found)));
    const states: Array<readonly [string, ComponentHealth]> = answers.flat();
    const phase = this.coordinator.phase;
    if (this.coordinator.state !== 'serving') states.push(['shutdown', down(phase ? { phase } : {})]);
    return readinessReport(states, this.options.advisoryComponents);
  }

  private async ask({ component, indicator }: FoundIndicator): Promise<Array<[string, ComponentHealth]>> {
    try {
      const answer = await within(Promise.resolve().then(() => indicator.isHealthy()), this.options.readinessTimeoutMs, this.clock);
      return componentStates(component, answer);
    } catch {
      // no error text in a probe's answer: a failing or late indicator is simply down
      return [[component, down()]];
    }
  }

  private found(): readonly FoundIndicator[] {
    return this.indicators ?? this.discover();
  }

  /** Every instance of a marked class, one per component (an app may list an indicator its module provides too). */
  private discover(): readonly FoundIndicator[] {
    const byComponent = new Map<string, FoundIndicator>();
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.instance;
      if (!wrapper.isDependencyTreeStatic() || typeof instance !== 'object' || instance === null) continue;
      const component: unknown = this.reflector.get(READINESS_COMPONENT, instance.constructor);
      if (typeof component !== 'string' || byComponent.has(component)) continue;
      if (typeof (instance as Partial<ComponentHealthIndicator>).isHealthy !== 'function') continue;
      byComponent.set(component, { component, indicator: instance as ComponentHealthIndicator });
    }
    return [...byComponent.values()];
  }
}
