import { Logger } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { DataSource } from 'typeorm';
import { AdmissionController } from '../admission/admission-controller';
import { InvocationLedger } from '../ledger/invocation-ledger';
import { AuditSink } from '../policy/audit-log/audit-sink';
import { RuntimePolicy } from '../policy/runtime-policy';
import { PostgresSessionService } from '../runner/postgres-session-service';
import { Runner } from '../runner/runner';
import { TraceStore } from '../trace/trace-store';
import type { RunsModuleAsyncOptions } from '../runner/runs.module';
import { helperAgent, helperDraftAgent, openAIAgent, operatorAgent } from './reference-agents';

/** The app name the reference service stores its sessions under. */
export const REFERENCE_APP_NAME = 'reference';

/**
 * The principal the reference service's runs trace under and `GET /traces` answers for. It has no
 * authentication, so every caller is this one principal; an application maps its authenticated
 * tenant or user in `resolvePrincipal` and in the Runner's `traceStore.principal`.
 */
export const REFERENCE_TRACE_PRINCIPAL = 'local-runtime';

/**
 * The reference service's runners, one per agent, wired as an application would: the module's
 * admission controller (queueing), runtime policy and Postgres audit log, the ledger for
 * `durable: true` runs, and sessions on the same Postgres.
 */
export const referenceRunsOptions: RunsModuleAsyncOptions = {
  inject: [AdmissionController, RuntimePolicy, AuditSink, InvocationLedger, DataSource, EventEmitter2, TraceStore],
  useFactory: async (
    admission: AdmissionController,
    policy: RuntimePolicy,
    auditSink: AuditSink,
    ledger: InvocationLedger,
    dataSource: DataSource,
    events: EventEmitter2,
    traceStore: TraceStore | null,
  ) => {
    const sessionService = new PostgresSessionService(dataSource);
    await sessionService.start();
    const logger = new Logger('Runner');
    const trace = traceStore === null ? {} : { traceStore: { store: traceStore, principal: REFERENCE_TRACE_PRINCIPAL } };
    const agents = [helperAgent, helperDraftAgent, operatorAgent, openAIAgent()].filter((agent) => agent !== null);
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
          ...trace,
        }),
    );
    return { runners, registry: { ...trace } };
  },
};
