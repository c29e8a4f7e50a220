import { DynamicModule, Global, Inject, Logger, Module, type Provider } from '@nestjs/common';
import { AgentRuntimeHealthModule } from '../health/agent-runtime-health.module';
import { ShutdownCoordinator } from '../health/shutdown-coordinator';
import { moduleBuilder, type ModuleAsyncOptions } from '../shared/module-builder';
import { asTelemetrySink, optionalEventEmitter } from '../telemetry/event-emitter-injection';
import type { AdmissionConfig } from './admission-config';
import { AdmissionController } from './admission-controller';
import { AdmissionGuard } from './admission.guard';
import { AdmissionHealthIndicator } from './admission.health';
import { AdmissionReleaseInterceptor } from './admission-release.interceptor';
import { ADMISSION_OPTIONS, ADMISSION_SERVICE } from './admission.constants';
import { AdmissionError } from './admission.errors';

/** A class that builds the admission configuration (`useClass` / `useExisting`). */
export interface AdmissionOptionsFactory {
  createAdmissionOptions(): AdmissionConfig | Promise<AdmissionConfig>;
}

/** Options of `AdmissionModule.forRootAsync`: `imports`, `inject`, and exactly one of `useFactory`, `useClass`, `useExisting`. */
export type AdmissionModuleAsyncOptions = ModuleAsyncOptions<AdmissionConfig, AdmissionOptionsFactory>;

const controllerProvider: Provider = {
  provide: AdmissionController,
  inject: [ADMISSION_OPTIONS, ...optionalEventEmitter()],
  // the constructor validates the options (resolveAdmissionConfig) and names every bad one
  useFactory: (options: AdmissionConfig, events?: unknown) => new AdmissionController(options, { events: asTelemetrySink(events) }),
};

/**
 * Global module providing `AdmissionController`, `ADMISSION_OPTIONS` and `AdmissionHealthIndicator`.
 * Invalid options stop bootstrap with `invalid_admission_control_config`. On shutdown (`app.close()`,
 * or a signal with `enableShutdownHooks()`) the shutdown coordinator runs its two steps: `beginDrain`
 * first (queued requests fail with `deployment_draining`, readiness goes down), and after the runs,
 * a wait of up to `drainTimeoutMs` for the active permits.
 */
@Global()
@Module({})
export class AdmissionModule {
  private readonly logger = new Logger('AdmissionModule');

  constructor(@Inject(AdmissionController) controller: AdmissionController, @Inject(ShutdownCoordinator) coordinator: ShutdownCoordinator) {
    const counts = () => {
      const status = controller.status();
      return { active: status.active, queued: status.queue_length };
    };
    coordinator.register({ component: 'admission', phase: 'drain_begin', run: () => void controller.beginDrain(), counts });
    coordinator.register({ component: 'admission', phase: 'admission_drain', run: (signal) => this.drain(controller, signal), counts });
  }

  static forRoot(config: AdmissionConfig = {}): DynamicModule {
    return admissionModule.forRoot(config);
  }

  static forRootAsync(options: AdmissionModuleAsyncOptions): DynamicModule {
    return admissionModule.forRootAsync(options);
  }

  private async drain(controller: AdmissionController, signal: AbortSignal): Promise<void> {
    try {
      const status = await controller.drain();
      this.logger.log(`admission drained (active ${status.active})`);
    } catch (error) {
      if (!AdmissionError.isAgentRuntimeError(error, AdmissionError) || error.code !== 'drain_timeout') throw error;
      // once the coordinator's bound ran out it has logged the step itself
      if (!signal.aborted) this.logger.warn(`admission drain timed out with ${String(error.details?.active)} permits still active; shutdown continues`);
    }
  }
}

const admissionModule = moduleBuilder<AdmissionConfig, AdmissionOptionsFactory>({
  module: AdmissionModule,
  optionsToken: ADMISSION_OPTIONS,
  factoryMethod: 'createAdmissionOptions',
  invalid: (details) => new AdmissionError('invalid_admission_control_config', details),
  metadata: () => ({
    imports: [AgentRuntimeHealthModule],
    providers: [controllerProvider, { provide: ADMISSION_SERVICE, useExisting: AdmissionController }, AdmissionGuard, AdmissionReleaseInterceptor, AdmissionHealthIndicator],
    exports: [AdmissionController, ADMISSION_SERVICE, ADMISSION_OPTIONS, AdmissionGuard, AdmissionReleaseInterceptor, AdmissionHealthIndicator],
  }),
});
