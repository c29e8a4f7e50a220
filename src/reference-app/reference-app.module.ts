import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { AdmissionConfig } from '../admission/admission-config';
import { AdmissionModule } from '../admission/admission.module';
import { ClusterModule } from '../cluster/cluster.module';
import { AgentRuntimeHealthModule } from '../health/agent-runtime-health.module';
import { agentRuntimeDataSourceOptions } from '../database/data-source.factory';
import { DatabaseHealthIndicator } from '../database/database.health';
import { AgentRuntimeExceptionFilter } from '../http/agent-runtime-exception.filter';
import { EvaluationModule } from '../evaluation/evaluation.module';
import { DecisionLogListener } from './decision-log.listener';
import { InvokeController } from './invoke.controller';
import { InvocationsController } from './invocations.controller';
import { leaseRecoveryProviders } from './lease-recovery.service';
import { LedgerModule } from '../ledger/ledger.module';
import { referenceAdmissionConfig, referencePolicySpec } from './reference-config';
import { PolicyDemoController } from './policy-demo.controller';
import { RuntimePolicyModule } from '../policy/runtime-policy.module';
import { RunsModule } from '../runner/runs/runs.module';
import { RuntimeServicesModule } from '../services/runtime-services.module';
import { ReferenceGenerationListener } from './reference-generation-listener';
import { REFERENCE_APP_NAME, REFERENCE_TRACE_PRINCIPAL, referenceRunsOptions } from './reference-runners';
import { isApprover, referenceAuthorizeRun, referencePrincipalResolver, referenceUsers, type ReferenceUser } from './reference-auth';
import type { ResolvePrincipal } from '../http/principal';
import { TraceStoreModule } from '../trace/trace-store.module';
import type { RuntimePolicySpec } from '../policy/runtime-policy-compiler';
import { AdmissionStatusController, HealthController, REFERENCE_PRINCIPALS } from './status.controller';
import { ConsoleModule } from '../observability/console/console.module';
import { MetricsModule } from '../observability/metrics/metrics.module';

/** Settings of the reference service. */
export interface ReferenceAppOptions {
  /** Postgres the service uses (already migrated). */
  databaseUrl: string;
  /** @default from the environment, see `referenceAdmissionConfig` */
  admission?: AdmissionConfig;
  /** @default from the environment, see `referencePolicySpec` */
  policy?: RuntimePolicySpec;
  /** Which policy decisions go to the Postgres audit log. @default `AUDIT_DECISIONS` or 'deny' */
  auditDecisions?: 'deny' | 'all';
  /** Log every admission decision. @default true */
  logDecisions?: boolean;
  /**
   * Cluster mode (`CLUSTER=1`): this process is one instance of a cluster on the database, with
   * admission limits held across every instance. @default off
   */
  cluster?: { instanceId?: string };
  /** The demo users (`Authorization: Bearer <token>`). @default `referenceUsers()` (from `REFERENCE_USERS`) */
  users?: readonly ReferenceUser[];
}

/**
 * The principal of `GET /traces`: every reference Runner records under one partition
 * (`local-runtime`), which approvers read; anyone else reads their own partition, which is empty.
 */
const tracesPrincipal =
  (resolve: ResolvePrincipal): ResolvePrincipal =>
  async (request) => {
    const principal = await resolve(request);
    return principal && isApprover(principal) ? { id: REFERENCE_TRACE_PRINCIPAL, roles: principal.roles ?? [] } : principal;
  };

/** The service `npm start` runs: the library's modules wired as a user would wire them. */
@Module({})
export class ReferenceAppModule {
  static forRoot(options: ReferenceAppOptions): DynamicModule {
    const resolvePrincipal = referencePrincipalResolver(options.users ?? referenceUsers());
    const access = { resolvePrincipal, authorizeRun: referenceAuthorizeRun };
    return {
      module: ReferenceAppModule,
      imports: [
        EventEmitterModule.forRoot(),
        AdmissionModule.forRoot({ ...(options.admission ?? referenceAdmissionConfig()), ...(options.cluster ? { cluster: {} } : {}) }),
        // runs live on Postgres in both modes (a paused run is confirmed after a restart): its store needs the instance
        ClusterModule.forRoot(options.cluster ?? {}),
        // evaluation has one owner per cluster: the standby instances are ready all the same
        ...(options.cluster ? [AgentRuntimeHealthModule.forRoot({ advisoryComponents: ['evaluation'] })] : []),
        TypeOrmModule.forRoot({ ...agentRuntimeDataSourceOptions(options.databaseUrl), retryAttempts: 2, retryDelay: 500 }),
        LedgerModule.forRoot(),
        RuntimePolicyModule.forRoot({
          policy: options.policy ?? referencePolicySpec(),
          auditLog: 'postgres',
          auditDecisions: options.auditDecisions ?? (process.env.AUDIT_DECISIONS === 'all' ? 'all' : 'deny'),
        }),
        TraceStoreModule.forRoot({ resolvePrincipal: tracesPrincipal(resolvePrincipal) }),
        RuntimeServicesModule.forRoot({ profile: 'durable_local', config: {} }),
        RunsModule.forRootAsync(referenceRunsOptions(access)),
        // every authenticated caller evaluates as the reference app itself
        EvaluationModule.forRoot({ resolvePrincipal, resolveScope: () => ({ app: REFERENCE_APP_NAME }), service: { maxConcurrency: 2, maxQueue: 100 } }),
        // behind the demo authentication: each viewer sees the runs they may see; approvers see denials and tenants too
        ConsoleModule.forRoot({ path: '/console', resolvePrincipal, mayViewDenials: isApprover, mayViewTenants: isApprover }),
        MetricsModule.forRoot({ defaultMetrics: true }),
      ],
      controllers: [InvokeController, InvocationsController, PolicyDemoController, AdmissionStatusController, HealthController],
      providers: [{ provide: APP_FILTER, useClass: AgentRuntimeExceptionFilter }, { provide: REFERENCE_PRINCIPALS, useValue: resolvePrincipal }, DatabaseHealthIndicator, ReferenceGenerationListener, ...leaseRecoveryProviders, ...(options.logDecisions === false ? [] : [DecisionLogListener])],
    };
  }
}
