/**
 * Attribute, event and operation names of the spans (OpenTelemetry GenAI semantic conventions, and
 * `agent_runtime.*` for what the conventions do not name). Written out here rather than imported:
 * the GenAI names are experimental in `@opentelemetry/semantic-conventions`, which is no dependency.
 */
export const GenAiAttributes = Object.freeze({
  operationName: 'gen_ai.operation.name',
  agentName: 'gen_ai.agent.name',
  requestModel: 'gen_ai.request.model',
  toolName: 'gen_ai.tool.name',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  errorType: 'error.type',
} as const);

/** The package's own attributes and span events. */
export const RuntimeAttributes = Object.freeze({
  invocationId: 'agent_runtime.invocation_id',
  runId: 'agent_runtime.run_id',
  outcome: 'agent_runtime.outcome',
  reason: 'agent_runtime.reason',
  admissionEvent: 'agent_runtime.admission',
  admissionOutcome: 'agent_runtime.admission.outcome',
  admissionWaitMs: 'agent_runtime.admission.wait_ms',
  admissionReason: 'agent_runtime.admission.reason',
  policyEvent: 'agent_runtime.policy.decision',
  policyOperation: 'agent_runtime.policy.operation',
  policyOutcome: 'agent_runtime.policy.outcome',
  policyReason: 'agent_runtime.policy.reason',
  policyDecisionId: 'agent_runtime.policy.decision_id',
} as const);

/** `gen_ai.operation.name` values, also the first word of each span name. */
export const GenAiOperations = Object.freeze({ invokeAgent: 'invoke_agent', chat: 'chat', executeTool: 'execute_tool' } as const);

/** The instrumentation scope the spans are reported under. */
export const TRACER_NAME = 'nest-agent-runtime';
