import { DynamicModule, Global, Inject, Module, Optional, type OnModuleDestroy, type Provider } from '@nestjs/common';
import { moduleBuilder, type ModuleAsyncOptions } from '../shared/nest/module.builder';
import { TraceStore } from './trace-store';
import { TRACE_STORE_MODULE_OPTIONS, resolveTraceStoreModuleOptions, type ResolvedTraceStoreModuleOptions, type TraceStoreModuleOptions } from './trace-store-module-options';
import { TraceStoreError } from './trace-store.errors';
import { TraceStoreHealthIndicator } from './trace-store.health';
import { TracesController } from './traces.controller';

/** A class that builds the module options (`useClass` / `useExisting`). */
export interface TraceStoreOptionsFactory {
  createTraceStoreOptions(): TraceStoreModuleOptions | Promise<TraceStoreModuleOptions>;
}

/** Options of `TraceStoreModule.forRootAsync`. */
export type TraceStoreModuleAsyncOptions = ModuleAsyncOptions<TraceStoreModuleOptions, TraceStoreOptionsFactory>;

const storeProvider: Provider = {
  provide: TraceStore,
  inject: [TRACE_STORE_MODULE_OPTIONS],
  useFactory: (options: ResolvedTraceStoreModuleOptions) => (options.enabled ? new TraceStore(options.options) : null),
};

/**
 * Global module providing the `TraceStore` singleton (closed when the module is destroyed; `null`
 * with `enabled: false`), `TracesController` (`GET /traces`) and `TraceStoreHealthIndicator`. Inject
 * the store into Runner and registry factories as `traceStore: {store}`.
 *
 * @example
 * TraceStoreModule.forRoot({ resolvePrincipal: (req) => tenantOf(req) })
 */
@Global()
@Module({})
export class TraceStoreModule implements OnModuleDestroy {
  constructor(@Optional() @Inject(TraceStore) private readonly store: TraceStore | null) {}

  static forRoot(options: TraceStoreModuleOptions = {}): DynamicModule {
    return { ...traceStoreModule.forRoot(options), controllers: [TracesController] };
  }

  static forRootAsync(options: TraceStoreModuleAsyncOptions): DynamicModule {
    return { ...traceStoreModule.forRootAsync(options), controllers: [TracesController] };
  }

  onModuleDestroy(): void {
    this.store?.close();
  }
}

const traceStoreModule = moduleBuilder<TraceStoreModuleOptions, TraceStoreOptionsFactory>({
  module: TraceStoreModule,
  optionsToken: TRACE_STORE_MODULE_OPTIONS,
  factoryMethod: 'createTraceStoreOptions',
  resolve: resolveTraceStoreModuleOptions,
  invalid: (details) => new TraceStoreError('invalid_trace_store_options', details),
  metadata: () => ({
    providers: [storeProvider, TraceStoreHealthIndicator],
    exports: [TraceStore, TRACE_STORE_MODULE_OPTIONS, TraceStoreHealthIndicator],
  }),
});
