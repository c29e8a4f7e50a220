import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as api from '../src';
import * as testing from '../src/testing';

/**
 * The sorted names the package exports. A name that appears or disappears fails here, so a leak of an
 * internal or the removal of a public name is a deliberate change of this list.
 */
const PACKAGE_EXPORTS = [
  'ADMISSION_OPTIONS',
  'ADMISSION_SERVICE',
  'AGENT_RUNTIME_MIGRATIONS',
  'AUDIT_HEAD_TABLE_SPEC',
  'AUDIT_LOG_TABLE_SPEC',
  'Admission',
  'AdmissionController',
  'AdmissionError',
  'AdmissionGuard',
  'AdmissionHealthIndicator',
  'AdmissionModule',
  'AdmissionPermit',
  'AdmissionReleaseInterceptor',
  'AdmissionSignal',
  'AgentEndpoint',
  'AgentRuntimeExceptionFilter',
  'AgentRuntimeHealthError',
  'AgentRuntimeHealthModule',
  'AuditChainVerifier',
  'AuditSink',
  'ClusterAdmissionController',
  'ClusterError',
  'ClusterHealthIndicator',
  'ClusterInstance',
  'ClusterModule',
  'ConsoleError',
  'ConsoleModule',
  'DatabaseHealthIndicator',
  'EvalService',
  'EvalServiceError',
  'EvalServiceHealthIndicator',
  'EvaluationModule',
  'HANDOVER_REASON',
  'HttpRequestError',
  'INVOCATION_PHASES',
  'InMemoryRunStore',
  'InMemorySessionService',
  'InvocationLedger',
  'JsonObjectBodyPipe',
  'LEDGER_TABLE_SPEC',
  'LedgerError',
  'LedgerHealthIndicator',
  'LedgerModule',
  'LocalEvalExecutor',
  'MEMORY_INGESTION_PLUGIN',
  'MemoryOutbox',
  'MetricsError',
  'MetricsModule',
  'OpenAICompatibleModel',
  'PostgresAuditLog',
  'PostgresEvalStore',
  'PostgresRunStore',
  'PostgresSessionService',
  'ReadinessIndicator',
  'ReadinessService',
  'RunRegistry',
  'Runner',
  'RunnerError',
  'RunsHealthIndicator',
  'RunsModule',
  'RuntimeMetrics',
  'RuntimePolicy',
  'RuntimePolicyError',
  'RuntimePolicyInterceptor',
  'RuntimePolicyModule',
  'RuntimeServiceError',
  'RuntimeServiceSupervisor',
  'RuntimeServicesHealthIndicator',
  'RuntimeServicesModule',
  'SESSION_EVENT_TABLE_SPEC',
  'SESSION_TABLE_SPEC',
  'SchemaValidatorError',
  'ScriptedModel',
  'ShutdownCoordinator',
  'TERMINAL_PHASES',
  'TelemetryEvents',
  'ToolEndpoint',
  'TraceReceiver',
  'TraceStore',
  'TraceStoreError',
  'TraceStoreHealthIndicator',
  'TraceStoreModule',
  'agentRuntimeDataSourceOptions',
  'amendToolCall',
  'assertAuditLogSchema',
  'assertSchema',
  'canonicalJson',
  'compareResults',
  'createAgentRuntimeDataSource',
  'createEvalStoreMigrations',
  'createLedgerMigration',
  'createRuntimeServices',
  'defaultSanitizeTerminalOutcome',
  'defineTableSpec',
  'fingerprintFunction',
  'finishWithRetry',
  'indicatorResult',
  'isPolicyDecision',
  'isPostgresIdentifier',
  'isValidSubject',
  'jsonDepthVerifier',
  'ledgerTableSpec',
  'measure',
  'measureContent',
  'requestValidationExceptionFactory',
  'runAgentRuntimeMigrations',
  'runEvalGate',
  'summarizeDecision',
  'systemClock',
  'useJsonBodyLimits',
  'validateSchema',
  'verifyAuditChain',
  'verifyDecisionDigest',
];

describe('public API', () => {
  it('the package entry point exports exactly the public names', () => {
    expect(Object.keys(api).sort()).toEqual(PACKAGE_EXPORTS);
  });

  it('the testing entry point exports the manual clock only', () => {
    expect(Object.keys(testing).sort()).toEqual(['ManualClock']);
  });

  it('keeps internals out: constants, lock keys, the audit recorder, the embedded-Postgres launcher', () => {
    for (const internal of ['AuditRecorder', 'instanceLockKey', 'startEmbeddedPostgres', 'openProjectDatabase', 'CLOSE_GRACE_MS', 'GENESIS_HASH', 'MIGRATIONS_TABLE']) {
      expect(Object.keys(api)).not.toContain(internal);
    }
  });

  it('names the telemetry events as the spec does', () => {
    expect(api.TelemetryEvents).toMatchObject({
      admissionDecision: 'agent_runtime.admission.decision',
      policyDecision: 'agent_runtime.policy.decision',
    });
  });

  it('package.json maps "." and "./testing" to the built entry points', () => {
    const manifest = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as {
      exports: Record<string, { types: string; default: string }>;
    };
    expect(manifest.exports['.']).toEqual({ types: './dist/src/index.d.ts', default: './dist/src/index.js' });
    expect(manifest.exports['./testing']).toEqual({ types: './dist/src/testing/index.d.ts', default: './dist/src/testing/index.js' });
  });

});
