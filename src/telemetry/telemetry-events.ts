/** Event names emitted by the package's components. */
export const TelemetryEvents = Object.freeze({
  admissionDecision: 'agent_runtime.admission.decision',
  policyDecision: 'agent_runtime.policy.decision',
  ledgerOperation: 'agent_runtime.ledger.operation',
  runnerInvocation: 'agent_runtime.runner.invocation',
  evaluationJob: 'agent_runtime.evaluation.job',
} as const);
