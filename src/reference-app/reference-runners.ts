import { Logger } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { DataSource } from 'typeorm';
import { AdmissionController } from '../admission/admission-controller';
import { InvocationLedger } from '../ledger/invocation-ledger';
import { AuditSink } from '../policy/audit-log/audit-sink';
import { RuntimePolicy } from '../policy/runtime-policy';
import { PostgresSessionService } from '../runner/postgres-session-service';
import { Runner } from '../runner/runner';
import type { RunsModuleAsyncOptions } from '../runner/runs.module';
import { helperAgent, openAIAgent, operatorAgent } from './reference-agents';

/** The app name the reference service stores its sessions under. */
export const REFERENCE_APP_NAME = 'reference';

/**
 * The reference service's runners, one per agent, wired as an application would: the module's
 * admission controller (queueing), runtime policy and Postgres audit log, the ledger for
 * `durable: true` runs, and sessions on the same Postgres.
 */
export const referenceRunsOptions: RunsModuleAsyncOptions = {
  inject: [AdmissionController, RuntimePolicy, AuditSink, InvocationLedger, DataSource, EventEmitter2],
  useFactory: async (admission: AdmissionController, policy: RuntimePolicy, auditSink: AuditSink, ledger: InvocationLedger, dataSource: DataSource, events: EventEmitter2) => {
    const sessionService = new PostgresSessionService(dataSource);
    await sessionService.start();
    const logger = new Logger('Runner');
    const agents = [helperAgent, operatorAgent, openAIAgent()].filter((agent) => agent !== null);
    const runners = agents.map(
      (agent) =>
        new Runner({
          appName: REFERENCE_APP_NAME,
          agent,
          sessionService,
          admission: { controller: admission },
          runtimePolicy: policy,
          auditSink,
          ledger,
          events,
          logger,
          runTimeoutMs: 120_000,
        }),
    );
    return { runners };
  },
};
