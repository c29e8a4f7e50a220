import type { Registry } from 'prom-client';
import { promClient } from './prom-client-loader';
import type { TelemetrySink } from '../../telemetry/telemetry-sink';
import { LabelFold } from './label-fold';
import { registerStatusMetrics, type MetricsSources } from './status-metrics';
import { TelemetryMetrics } from './telemetry-metrics';

/** An event source the metrics can listen to: `EventEmitter2` and Node's `EventEmitter` fit. */
export interface TelemetrySource {
  on(event: string, listener: (payload: object) => void): unknown;
  off(event: string, listener: (payload: object) => void): unknown;
}

/** Settings of a {@link RuntimeMetrics}. */
export interface RuntimeMetricsOptions {
  /** Registry the metrics are registered in; they are removed from it by `close()`. @default a new `Registry` of its own */
  readonly registry?: Registry;
  /** Agent ids that keep their own `agent_id` label value; every other id is `_other`. @default [] */
  readonly agents?: Iterable<string>;
  /**
   * Tenant ids that keep their own `tenant_id` label value (spec 09 §7: the tenants named in the
   * admission configuration); every other tenant, and work without a tenant, is `_other`. @default []
   */
  readonly tenants?: Iterable<string>;
  /** Also collect prom-client's default process metrics (`process_*`, `nodejs_*`) in the registry. @default false */
  readonly defaultMetrics?: boolean;
  /** Components whose status is read at scrape time. @default none */
  readonly sources?: MetricsSources;
}

/**
 * The Prometheus metrics of the package (no Nest import): counters and histograms fed by telemetry
 * events, gauges read from the components' status at scrape time. Feed it events as a
 * `TelemetrySink` (`events: metrics` of a component built by hand) or by `subscribe(emitter)`.
 *
 * @example
 * const metrics = new RuntimeMetrics({ agents: ['support'], sources: { admission } });
 * const admission = new AdmissionController(config, { events: metrics });
 * const text = await metrics.metrics();
 */
export class RuntimeMetrics implements TelemetrySink {
  /** The registry holding the metrics. */
  readonly registry: Registry;
  readonly #telemetry: TelemetryMetrics;
  readonly #names: readonly string[];
  readonly #subscriptions = new Set<() => void>();

  constructor(options: RuntimeMetricsOptions = {}) {
    const registry = options.registry ?? new (promClient().Registry)();
    const before = new Set(registry.getMetricsAsArray().map((metric) => metric.name));
    const agents = new LabelFold(options.agents ?? []);
    const tenants = new LabelFold(options.tenants ?? []);
    this.#telemetry = new TelemetryMetrics(registry, agents, tenants);
    registerStatusMetrics(registry, options.sources ?? {}, agents, tenants);
    if (options.defaultMetrics === true) promClient().collectDefaultMetrics({ register: registry });
    this.registry = registry;
    this.#names = registry
      .getMetricsAsArray()
      .map((metric) => metric.name)
      .filter((name) => !before.has(name));
  }

  /** The exposition's `Content-Type` (`text/plain; version=0.0.4; charset=utf-8` for a default registry). */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** Records one telemetry event; never throws. */
  emit(event: string, payload: object): void {
    this.#telemetry.emit(event, payload);
  }

  /** Listens to the package's telemetry events on `source`; returns the function that stops listening. */
  subscribe(source: TelemetrySource): () => void {
    const listener = (event: string) => (payload: object) => this.#telemetry.emit(event, payload);
    const listeners = this.#telemetry.events.map((event) => [event, listener(event)] as const);
    for (const [event, fn] of listeners) source.on(event, fn);
    const unsubscribe = () => {
      if (!this.#subscriptions.delete(unsubscribe)) return;
      for (const [event, fn] of listeners) source.off(event, fn);
    };
    this.#subscriptions.add(unsubscribe);
    return unsubscribe;
  }

  /** The exposition text of the registry (all its metrics, also those the application added). */
  metrics(): Promise<string> {
    return this.registry.metrics();
  }

  /** Stops every subscription and removes this instance's metrics from the registry. Idempotent. */
  close(): void {
    for (const unsubscribe of [...this.#subscriptions]) unsubscribe();
    for (const name of this.#names) this.registry.removeSingleMetric(name);
  }
}
