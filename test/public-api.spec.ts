import * as api from '../src';

describe('package entry point', () => {
  it.each([
    // spec 01
    'AdmissionController',
    'AdmissionError',
    'AdmissionModule',
    'AdmissionGuard',
    'AdmissionReleaseInterceptor',
    'Admission',
    'AdmissionPermit',
    'AdmissionHealthIndicator',
    'ADMISSION_OPTIONS',
    // spec 02
    'canonicalJson',
    'measure',
    'measureContent',
    'RuntimePolicy',
    'RuntimePolicyError',
    'summarizeDecision',
    'verifyDecisionDigest',
    'RuntimePolicyModule',
    'AgentEndpoint',
    'ToolEndpoint',
    'RuntimePolicyInterceptor',
    'AuditSink',
    'PostgresAuditLog',
    'verifyAuditChain',
    // spec 04 §1 and conventions
    'validateSchema',
    'assertSchema',
    'createAgentRuntimeDataSource',
    'runAgentRuntimeMigrations',
    'startEmbeddedPostgres',
    'openProjectDatabase',
    'TelemetryEvents',
  ])('exports %s', (name) => {
    expect((api as Record<string, unknown>)[name]).toBeDefined();
  });

  it('names the telemetry events as the spec does', () => {
    expect(api.TelemetryEvents).toMatchObject({
      admissionDecision: 'agent_runtime.admission.decision',
      policyDecision: 'agent_runtime.policy.decision',
    });
  });
});
