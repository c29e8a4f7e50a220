import { SetMetadata } from '@nestjs/common';
import type { ComponentHealthResult } from './readiness-report';

/** Metadata key of {@link ReadinessIndicator}. */
export const READINESS_COMPONENT = 'agent_runtime:readiness_component';

/** A provider that reports one component's readiness, as a terminus indicator does. */
export interface ComponentHealthIndicator {
  /** `{[component]: {status: 'up' | 'down', ...data}}`; a throw or a late answer counts as down. */
  isHealthy(): ComponentHealthResult | Promise<ComponentHealthResult>;
}

/**
 * Marks an indicator class so that `ReadinessService` finds every instance the application
 * provides (the library modules provide their own) and asks it on each readiness check.
 *
 * @example
 * @ReadinessIndicator('invocation_ledger')
 * @Injectable()
 * export class LedgerHealthIndicator implements ComponentHealthIndicator { ... }
 */
export const ReadinessIndicator = (component: string): ClassDecorator => SetMetadata(READINESS_COMPONENT, component);
