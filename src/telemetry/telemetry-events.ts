/** Every event name the package's components emit: the one list, so a listener never spells a name by hand. */
export const TelemetryEvents = Object.freeze({
  admissionDecision: 'agent_runtime.admission.decision',
  policyDecision: 'agent_runtime.policy.decision',
  ledgerOperation: 'agent_runtime.ledger.operation',
  runnerInvocation: 'agent_runtime.runner.invocation',
  evaluationJob: 'agent_runtime.evaluation.job',
  servicesGeneration: 'agent_runtime.services.generation',
  memoryOutboxJob: 'agent_runtime.memory_outbox.job',
} as const);
