import { DynamicModule, Inject, Module, type FactoryProvider, type InjectionToken, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { AdmissionConfig } from '../../admission/admission-config';
import type { AdmissionService } from '../../admission/admission-service';
import { ADMISSION_OPTIONS, ADMISSION_SERVICE } from '../../admission/admission.constants';
import { EvalService } from '../../evaluation/service/eval-service';
import { RuntimePolicy } from '../../policy/runtime-policy';
import { RunRegistry } from '../../runner/runs/run-registry';
import { RUNS_MODULE_OPTIONS, type ResolvedRunsModuleOptions } from '../../runner/runs/runs-module-options';
import { moduleBuilder } from '../../shared/nest/module.builder';
import { readOptions } from '../../shared/options/option-reader';
import { optionalEventEmitter } from '../../telemetry/event-emitter.provider';
import { TraceStore } from '../../trace/trace-store';
import { configuredAgentIds, configuredTenantIds, resolvedAdmissionConfig } from './configured-agents';
import { metricsController } from './metrics.controller';
import { MetricsError } from './metrics.errors';
import {
  DEFAULT_METRICS_PATH,
  isMetricsPath,
  METRICS_MODULE_OPTIONS,
  resolveMetricsModuleOptions,
  type MetricsModuleOptions,
  type ResolvedMetricsModuleOptions,
} from './metrics-module-options';
import { RuntimeMetrics, type TelemetrySource } from './runtime-metrics';

/** Injection token of the event emitter the metrics listen to (`null` without `@nestjs/event-emitter`). */
const METRICS_TELEMETRY_SOURCE = Symbol('METRICS_TELEMETRY_SOURCE');

const optional = (token: InjectionToken) => ({ token, optional: true });

const metricsProvider: FactoryProvider = {
  provide: RuntimeMetrics,
  inject: [
    METRICS_MODULE_OPTIONS,
    optional(ADMISSION_SERVICE),
    optional(ADMISSION_OPTIONS),
    optional(RuntimePolicy),
    optional(RunRegistry),
    optional(RUNS_MODULE_OPTIONS),
    optional(TraceStore),
    optional(EvalService),
  ],
  useFactory: (
    options: ResolvedMetricsModuleOptions,
    admission?: AdmissionService,
    admissionConfig?: AdmissionConfig,
    policy?: RuntimePolicy,
    runs?: RunRegistry,
    runsOptions?: ResolvedRunsModuleOptions,
    traceStore?: TraceStore | null,
    evaluation?: EvalService,
  ) => {
    const limits = admission ? resolvedAdmissionConfig(admissionConfig) : undefined;
    const agents = configuredAgentIds({ agents: options.agents, admission: limits, policy, runners: runsOptions?.registry.runners });
    return new RuntimeMetrics({
      ...(options.registry ? { registry: options.registry } : {}),
      agents,
      tenants: configuredTenantIds(limits),
      defaultMetrics: options.defaultMetrics,
      sources: { admission, admissionLimits: limits, runs, traceStore: traceStore ?? undefined, evaluation },
    });
  },
};

const telemetrySourceProvider: FactoryProvider = {
  provide: METRICS_TELEMETRY_SOURCE,
  inject: optionalEventEmitter(),
  useFactory: (emitter?: unknown) => (isTelemetrySource(emitter) ? emitter : null),
};

/**
 * Global module serving the package's Prometheus metrics at `GET /metrics` (option `path`) and
 * providing `RuntimeMetrics` (its `registry` takes the application's own metrics too). It listens to
 * the telemetry events on the app's `EventEmitter2` (when `@nestjs/event-emitter` is imported) from
 * module init to shutdown, and reads the status of the admission controller, run registry, trace
 * store and eval service present in the app at each scrape. Import it after those modules' options
 * are known; the agents that keep their own label are read once, at start-up.
 *
 * @example
 * MetricsModule.forRoot({ defaultMetrics: true })
 */
@Module({})
export class MetricsModule implements OnModuleInit, OnApplicationShutdown {
  #unsubscribe: (() => void) | undefined;

  constructor(
    @Inject(RuntimeMetrics) private readonly metrics: RuntimeMetrics,
    @Inject(METRICS_TELEMETRY_SOURCE) private readonly source: TelemetrySource | null,
  ) {}

  static forRoot(options: MetricsModuleOptions = {}): DynamicModule {
    return { ...metricsModule.forRoot(options), controllers: [metricsController(declaredPath(options))] };
  }

  onModuleInit(): void {
    if (this.source && !this.#unsubscribe) this.#unsubscribe = this.metrics.subscribe(this.source);
  }

  onApplicationShutdown(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    this.metrics.close();
  }
}

const metricsModule = moduleBuilder<MetricsModuleOptions, never, 'path'>({
  module: MetricsModule,
  optionsToken: METRICS_MODULE_OPTIONS,
  factoryMethod: 'createMetricsOptions',
  declared: { path: isMetricsPath },
  resolve: resolveMetricsModuleOptions,
  invalid: (details) => new MetricsError('invalid_metrics_options', details),
  metadata: () => ({
    providers: [metricsProvider, telemetrySourceProvider],
    exports: [RuntimeMetrics],
  }),
});

/** The route of the declaration; a bad `path` is refused at bootstrap by the options provider. */
function declaredPath(options: unknown): string {
  const read = readOptions(options, { path: isMetricsPath }, { name: 'options', unknownKeys: 'ignore' });
  return read.ok && typeof read.values.path === 'string' ? read.values.path : DEFAULT_METRICS_PATH;
}

function isTelemetrySource(value: unknown): value is TelemetrySource {
  return typeof value === 'object' && value !== null && typeof (value as TelemetrySource).on === 'function' && typeof (value as TelemetrySource).off === 'function';
}
