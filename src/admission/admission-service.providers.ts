import type { ClassProvider, ExistingProvider, FactoryProvider } from '@nestjs/common';
import { ClusterInstance } from '../cluster/cluster-instance';
import { ClusterAdmissionController } from './cluster/cluster-admission-controller';
import { clusterAdmissionSchemaTarget } from './cluster/cluster-admission-startup';
import { StartupSchemaCheck } from '../database/schema/startup-schema-check';
import { readOptions } from '../shared/options/option-reader';
import { asTelemetrySink, optionalEventEmitter } from '../telemetry/event-emitter.provider';
import type { AdmissionConfig } from './admission-config';
import { AdmissionController } from './admission-controller';
import { ADMISSION_OPTIONS, ADMISSION_SERVICE } from './admission.constants';

/** Cluster mode of `AdmissionModule` (spec 08 §3). */
export interface ClusterAdmissionModuleOptions {
  /** Period of the reap of dead instances and of the grant poll, in ms; 1..3600000. @default 1000 */
  reapIntervalMs?: number;
}

type AdmissionProvider = FactoryProvider | ExistingProvider | ClassProvider;

/** True for a plain object whose only key is an optional `reapIntervalMs` (the controller checks its range). */
export function isClusterAdmissionModuleOptions(value: unknown): boolean {
  return readOptions(value, { reapIntervalMs: (ms: unknown) => typeof ms === 'number' }, { name: 'cluster', unknownKeys: 'refuse' }).ok;
}

/** The process-local controller, also under `ADMISSION_SERVICE`. */
export function localAdmissionProviders(): AdmissionProvider[] {
  return [
    {
      provide: AdmissionController,
      inject: [ADMISSION_OPTIONS, ...optionalEventEmitter()],
      // the constructor validates the options (resolveAdmissionConfig) and names every bad one
      useFactory: (options: AdmissionConfig, events?: unknown) => new AdmissionController(options, { events: asTelemetrySink(events) }),
    },
    { provide: ADMISSION_SERVICE, useExisting: AdmissionController },
  ];
}

/**
 * The cluster controller on `ClusterModule`'s instance, also under `ADMISSION_SERVICE`; it starts in
 * `onModuleInit`, after the app's one start-up schema check.
 */
export function clusterAdmissionProviders(cluster: ClusterAdmissionModuleOptions): AdmissionProvider[] {
  return [
    {
      provide: ClusterAdmissionController,
      inject: [ADMISSION_OPTIONS, ClusterInstance, StartupSchemaCheck, ...optionalEventEmitter()],
      useFactory: (options: AdmissionConfig, instance: ClusterInstance, schemaCheck: StartupSchemaCheck, events?: unknown) => {
        const controller = new ClusterAdmissionController(options, { instance, ...cluster }, { events: asTelemetrySink(events) });
        schemaCheck.register('cluster_admission', () => clusterAdmissionSchemaTarget(instance.dataSource));
        // Nest calls the hook of a provider's value: the controller starts once every module registered its tables
        const onModuleInit = async (): Promise<void> => {
          try {
            await schemaCheck.assertAll();
            await controller.start();
          } catch (error) {
            // the app will not boot, and Nest closes nothing after a failed bootstrap: leave the cluster now
            await instance.stop();
            throw error;
          }
        };
        return Object.assign(controller, { onModuleInit });
      },
    },
    { provide: ADMISSION_SERVICE, useExisting: ClusterAdmissionController },
  ];
}
