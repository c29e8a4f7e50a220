import { DynamicModule, Module } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { TerminusModule } from '@nestjs/terminus';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { AdmissionConfig } from '../admission/admission-config';
import { AdmissionModule } from '../admission/admission.module';
import { AdmissionHealthIndicator } from '../admission/admission.health';
import { agentRuntimeDataSourceOptions } from '../database/data-source.factory';
import { DatabaseHealthIndicator } from '../database/database.health';
import { DecisionLogListener } from './decision-log.listener';
import { InvokeController } from './invoke.controller';
import { referenceAdmissionConfig } from './reference-config';
import { AdmissionStatusController, HealthController } from './status.controller';

/** Settings of the reference service. */
export interface ReferenceAppOptions {
  /** Postgres the service uses (already migrated). */
  databaseUrl: string;
  /** @default from the environment, see `referenceAdmissionConfig` */
  admission?: AdmissionConfig;
  /** Log every admission decision. @default true */
  logDecisions?: boolean;
}

/** The service `npm start` runs: the library's modules wired as a user would wire them. */
@Module({})
export class ReferenceAppModule {
  static forRoot(options: ReferenceAppOptions): DynamicModule {
    return {
      module: ReferenceAppModule,
      imports: [
        EventEmitterModule.forRoot(),
        AdmissionModule.forRoot(options.admission ?? referenceAdmissionConfig()),
        TypeOrmModule.forRoot({ ...agentRuntimeDataSourceOptions(options.databaseUrl), retryAttempts: 0 }),
        TerminusModule,
      ],
      controllers: [InvokeController, AdmissionStatusController, HealthController],
      providers: [AdmissionHealthIndicator, DatabaseHealthIndicator, ...(options.logDecisions === false ? [] : [DecisionLogListener])],
    };
  }
}
