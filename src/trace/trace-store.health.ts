import { Inject, Injectable, Optional } from '@nestjs/common';
import { indicatorResult, type ComponentHealthResult } from '../health/readiness-report';
import { TraceStore } from './trace-store';

/**
 * Health of the trace store (spec 06 §11): up while open, with `events`, `principals`,
 * `lifecycle_pending` and `lifecycle_delivery_dropped`; down once closed or when disabled. The store
 * is volatile and best-effort, so it is not a readiness indicator by default: list it with terminus
 * (or register it with `@ReadinessIndicator`) only if your readiness should depend on it.
 */
@Injectable()
export class TraceStoreHealthIndicator {
  constructor(@Optional() @Inject(TraceStore) private readonly store: TraceStore | null) {}

  isHealthy(key = 'trace_store'): ComponentHealthResult {
    if (this.store === null) return indicatorResult(key, false, { enabled: false });
    try {
      const status = this.store.status();
      return indicatorResult(key, true, {
        events: status.events,
        principals: status.principals,
        lifecycle_pending: status.lifecycle_pending,
        lifecycle_delivery_dropped: status.counters.lifecycle_delivery_dropped,
      });
    } catch {
      return indicatorResult(key, false, {});
    }
  }
}
