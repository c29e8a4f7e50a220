import {
  BeforeApplicationShutdown,
  DynamicModule,
  Global,
  Inject,
  Logger,
  Module,
  type FactoryProvider,
  type ModuleMetadata,
  type Provider,
  type Type,
} from '@nestjs/common';
import { asTelemetrySink, optionalEventEmitter } from '../telemetry/event-emitter-injection';
import type { AdmissionConfig } from './admission-config';
import { AdmissionController } from './admission-controller';
import { AdmissionGuard } from './admission.guard';
import { AdmissionReleaseInterceptor } from './admission-release.interceptor';
import { ADMISSION_OPTIONS } from './admission.constants';
import { AdmissionError } from './admission.errors';

/** A class that builds the admission configuration (`useClass` / `useExisting`). */
export interface AdmissionOptionsFactory {
  createAdmissionOptions(): AdmissionConfig | Promise<AdmissionConfig>;
}

/** Options of `AdmissionModule.forRootAsync`: exactly one of `useFactory`, `useClass`, `useExisting`. */
export interface AdmissionModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  inject?: FactoryProvider['inject'];
  useFactory?: (...args: any[]) => AdmissionConfig | Promise<AdmissionConfig>;
  useClass?: Type<AdmissionOptionsFactory>;
  useExisting?: Type<AdmissionOptionsFactory>;
}

const controllerProvider: Provider = {
  provide: AdmissionController,
  inject: [ADMISSION_OPTIONS, ...optionalEventEmitter()],
  // the constructor validates the options with the class-validator schema and lists every bad one
  useFactory: (options: AdmissionConfig, events?: unknown) => new AdmissionController(options, { events: asTelemetrySink(events) }),
};

/**
 * Global module providing `AdmissionController` and `ADMISSION_OPTIONS`. Invalid options stop
 * bootstrap with `invalid_admission_control_config`. On shutdown (hooks enabled by the app) it
 * drains: queued requests fail with `deployment_draining`, and it waits up to `drainTimeoutMs` for
 * the active permits.
 */
@Global()
@Module({})
export class AdmissionModule implements BeforeApplicationShutdown {
  private readonly logger = new Logger('AdmissionModule');

  constructor(@Inject(AdmissionController) private readonly controller: AdmissionController) {}

  static forRoot(config: AdmissionConfig = {}): DynamicModule {
    return AdmissionModule.build([{ provide: ADMISSION_OPTIONS, useValue: config }]);
  }

  static forRootAsync(options: AdmissionModuleAsyncOptions): DynamicModule {
    return AdmissionModule.build(asyncOptionsProviders(options), options.imports);
  }

  async beforeApplicationShutdown(): Promise<void> {
    try {
      const status = await this.controller.drain();
      this.logger.log(`admission drained (active ${status.active})`);
    } catch (error) {
      if (!(error instanceof AdmissionError) || error.code !== 'drain_timeout') throw error;
      this.logger.warn(`admission drain timed out with ${String(error.details?.active)} permits still active; shutdown continues`);
    }
  }

  private static build(optionProviders: Provider[], imports: ModuleMetadata['imports'] = []): DynamicModule {
    return {
      module: AdmissionModule,
      global: true,
      imports,
      providers: [...optionProviders, controllerProvider, AdmissionGuard, AdmissionReleaseInterceptor],
      exports: [AdmissionController, ADMISSION_OPTIONS, AdmissionGuard, AdmissionReleaseInterceptor],
    };
  }
}

function asyncOptionsProviders(options: AdmissionModuleAsyncOptions): Provider[] {
  if (options.useFactory) return [{ provide: ADMISSION_OPTIONS, useFactory: options.useFactory, inject: options.inject ?? [] }];
  const factoryClass = options.useClass ?? options.useExisting;
  if (!factoryClass) throw new AdmissionError('invalid_admission_control_config', { field: 'forRootAsync' });
  const fromFactory: Provider = {
    provide: ADMISSION_OPTIONS,
    useFactory: (factory: AdmissionOptionsFactory) => factory.createAdmissionOptions(),
    inject: [factoryClass],
  };
  return options.useClass ? [{ provide: options.useClass, useClass: options.useClass }, fromFactory] : [fromFactory];
}
