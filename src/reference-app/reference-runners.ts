import { Logger } from '@nestjs/common';
import type { AdmissionService } from '../admission/admission-service';
import { ADMISSION_SERVICE } from '../admission/admission.constants';
import { InvocationLedger } from '../ledger/invocation-ledger';
import { AuditSink } from '../policy/audit-log/audit-sink';
import { RuntimePolicy } from '../policy/runtime-policy';
import { Runner } from '../runner/runner';
import { RuntimeServiceSupervisor } from '../services/bundle/runtime-service-supervisor';
import type { GenerationRunnerSpec } from '../services/bundle/service-generation';
import { TraceStore } from '../trace/trace-store';
import type { RunsModuleAsyncOptions } from '../runner/runs/runs.module';
import type { RunsModuleOptions } from '../runner/runs/runs-module-options';
import { PostgresRunStoreProvider } from '../runner/runs/stores/postgres/postgres-run-store.provider';
import { batchAgent, helperAgent, helperDraftAgent, openAIAgent, operatorAgent } from './reference-agents';

/** The app name the reference service stores its sessions under. */
export const REFERENCE_APP_NAME = 'reference';

/**
 * The principal the reference service's runs trace under and `GET /traces` answers for. It has no
 * authentication, so every caller is this one principal; an application maps its authenticated
 * tenant or user in `resolvePrincipal` and in the Runner's `traceStore.principal`.
 */
export const REFERENCE_TRACE_PRINCIPAL = 'local-runtime';

/**
 * The reference service's runners, built on the bundle's current generation (see
 * {@link referenceRunnerBuilder}). Runs live on Postgres in both modes, since the service has it
 * anyway: a durable run paused before a restart is read, followed and confirmed after it, and a
 * run another instance (or an earlier life of this one) left executing is taken over.
 */
export const referenceRunsOptions = (access: Pick<RunsModuleOptions, 'resolvePrincipal' | 'authorizeRun'>): RunsModuleAsyncOptions => ({
  store: PostgresRunStoreProvider,
  inject: [ADMISSION_SERVICE, RuntimePolicy, AuditSink, InvocationLedger, RuntimeServiceSupervisor, TraceStore],
  useFactory: async (
    admission: AdmissionService,
    policy: RuntimePolicy,
    auditSink: AuditSink,
    ledger: InvocationLedger,
    services: RuntimeServiceSupervisor,
    traceStore: TraceStore | null,
  ) => {
    // the bundle's first generation may still be starting (module init order): wait for it
    await services.start();
    const build = referenceRunnerBuilder({ admission, policy, auditSink, ledger, traceStore });
    const trace = traceStore === null ? {} : { traceStore: { store: traceStore, principal: REFERENCE_TRACE_PRINCIPAL } };
    return { runners: build(services.runnerSpec('durable_local') as GenerationRunnerSpec), registry: { ...trace }, ...access };
  },
});

/** What every reference Runner shares besides the bundle's services. */
interface ReferenceRunnerParts {
  readonly admission: AdmissionService;
  readonly policy: RuntimePolicy;
  readonly auditSink: AuditSink;
  readonly ledger: InvocationLedger;
  readonly traceStore: TraceStore | null;
}

/**
 * The reference runners, one per agent, on a bundle generation's services (sessions, artifacts,
 * memory and the memory-ingestion plugin) with the module's admission controller (queueing),
 * runtime policy, Postgres audit log and the ledger for `durable: true` runs. No `events` option: the
 * runs module hands every run the app's `EventEmitter2`, so runner telemetry and metrics work as they are.
 */
export function referenceRunnerBuilder(parts: ReferenceRunnerParts): (spec: GenerationRunnerSpec) => Runner[] {
  const logger = new Logger('Runner');
  const trace = parts.traceStore === null ? {} : { traceStore: { store: parts.traceStore, principal: REFERENCE_TRACE_PRINCIPAL } };
  const agents = [helperAgent, helperDraftAgent, operatorAgent, batchAgent, openAIAgent()].filter((agent) => agent !== null);
  return (spec) =>
    agents.map(
      (agent) =>
        new Runner({
          ...spec.runnerOptions,
          appName: REFERENCE_APP_NAME,
          agent,
          admission: { controller: parts.admission },
          runtimePolicy: parts.policy,
          auditSink: parts.auditSink,
          ledger: parts.ledger,
          logger,
          runTimeoutMs: 120_000,
          ...trace,
        }),
    );
}
