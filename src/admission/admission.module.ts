import { DynamicModule, Global, Inject, Logger, Module } from '@nestjs/common';
import { AgentRuntimeHealthModule } from '../health/agent-runtime-health.module';
import { ShutdownCoordinator } from '../health/shutdown-coordinator';
import { moduleBuilder, type ModuleAsyncOptions } from '../shared/nest/module.builder';
import type { AdmissionConfig } from './admission-config';
import { ClusterAdmissionController } from './cluster/cluster-admission-controller';
import type { AdmissionService } from './admission-service';
import {
  clusterAdmissionProviders,
  isClusterAdmissionModuleOptions,
  localAdmissionProviders,
  type ClusterAdmissionModuleOptions,
} from './admission-service.providers';
import { AdmissionGuard } from './admission.guard';
import { AdmissionHealthIndicator } from './admission.health';
import { AdmissionReleaseInterceptor } from './admission-release.interceptor';
import { ADMISSION_OPTIONS, ADMISSION_SERVICE } from './admission.constants';
import { AdmissionError } from './admission.errors';

export interface AdmissionOptionsFactory {
  createAdmissionOptions(): AdmissionConfig | Promise<AdmissionConfig>;
}

/** Options of `AdmissionModule.forRootAsync`: `imports`, `inject`, and exactly one of `useFactory`, `useClass`, `useExisting`. */
export interface AdmissionModuleAsyncOptions extends ModuleAsyncOptions<AdmissionConfig, AdmissionOptionsFactory> {
  /** Cluster mode, declared beside the factory (the provider depends on it). @default off */
  cluster?: ClusterAdmissionModuleOptions;
}

/** Options of `AdmissionModule`: the configuration of spec 01 §2, and `cluster` for cluster mode (spec 08 §3). */
export interface AdmissionModuleOptions extends AdmissionConfig {
  /**
   * Cluster mode: limits hold across every instance on the database of `ClusterModule` (which must be
   * imported). Given when the module is declared, also beside a `forRootAsync` factory. @default off
   */
  cluster?: ClusterAdmissionModuleOptions;
}

/** A class that builds the admission configuration (`useClass` / `useExisting`). */
/**
 * Global module providing `ADMISSION_SERVICE` (the controller in use) with `AdmissionController`, or
 * in cluster mode `ClusterAdmissionController` (started before bootstrap ends: a schema mismatch or
 * `cluster_config_mismatch` stops it), and `ADMISSION_OPTIONS` and `AdmissionHealthIndicator`.
 * Invalid options stop bootstrap with `invalid_admission_control_config`. On shutdown (`app.close()`,
 * or a signal with `enableShutdownHooks()`) the shutdown coordinator runs its two steps: `beginDrain`
 * first (queued requests fail with `deployment_draining`, readiness goes down), and after the runs,
 * a wait of up to `drainTimeoutMs` for the active permits.
 */
@Global()
@Module({})
export class AdmissionModule {
  private readonly logger = new Logger('AdmissionModule');

  constructor(@Inject(ADMISSION_SERVICE) controller: AdmissionService, @Inject(ShutdownCoordinator) coordinator: ShutdownCoordinator) {
    const counts = () => {
      const status = controller.status();
      return { active: status.active, queued: status.queue_length };
    };
    coordinator.register({ component: 'admission', phase: 'drain_begin', run: () => void controller.beginDrain(), counts });
    coordinator.register({ component: 'admission', phase: 'admission_drain', run: (signal) => this.drain(controller, signal), counts });
    if (controller instanceof ClusterAdmissionController) coordinator.register({ component: 'cluster_admission', phase: 'services', run: () => controller.stop(), counts });
  }

  static forRoot(config: AdmissionModuleOptions = {}): DynamicModule {
    return admissionModule.forRoot(config);
  }

  static forRootAsync(options: AdmissionModuleAsyncOptions): DynamicModule {
    return admissionModule.forRootAsync(options);
  }

  private async drain(controller: AdmissionService, signal: AbortSignal): Promise<void> {
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

const admissionModule = moduleBuilder<AdmissionConfig, AdmissionOptionsFactory, 'cluster'>({
  module: AdmissionModule,
  optionsToken: ADMISSION_OPTIONS,
  factoryMethod: 'createAdmissionOptions',
  declared: { cluster: isClusterAdmissionModuleOptions },
  invalid: (details) => new AdmissionError('invalid_admission_control_config', details),
  metadata: (declared) => {
    const providers = declared.cluster ? clusterAdmissionProviders(declared.cluster as ClusterAdmissionModuleOptions) : localAdmissionProviders();
    return {
      imports: [AgentRuntimeHealthModule],
      providers: [...providers, AdmissionGuard, AdmissionReleaseInterceptor, AdmissionHealthIndicator],
      exports: [...providers.map((provider) => provider.provide), ADMISSION_OPTIONS, AdmissionGuard, AdmissionReleaseInterceptor, AdmissionHealthIndicator],
    };
  },
});
