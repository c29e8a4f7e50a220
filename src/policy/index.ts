export { canonicalJson, measure, measureContent } from './policy-json';
export type { MeasureResult, UnsupportedJsonKind } from '../json';
export { RuntimePolicy, type RuntimePolicyDeps } from './runtime-policy';
export {
  DEFAULT_MAX_ARGUMENT_BYTES,
  DEFAULT_MAX_CONTENT_BYTES,
  type RuntimePolicyRules,
  type RuntimePolicySelector,
  type RuntimePolicySpec,
} from './runtime-policy-spec';
export {
  INVALID_POLICY_FINGERPRINT,
  INVALID_POLICY_ID,
  INVALID_SUBJECT,
  isPolicyDecision,
  summarizeDecision,
  verifyDecisionDigest,
} from './policy-decision';
export { isValidSubject, MAX_POLICY_ID_BYTES, MAX_SUBJECT_BYTES } from './policy-name';
export { RuntimePolicyError, type RuntimePolicyCompileErrorCode, type RuntimePolicyErrorCode } from './runtime-policy.errors';
export { AuditSink } from './audit-sink';
export type {
  InvalidRuntimePolicyDescription,
  NormalizedRules,
  NormalizedSelector,
  PolicyBudgetKind,
  PolicyDecision,
  PolicyDecisionBudget,
  PolicyDecisionEvent,
  PolicyDecisionSummary,
  PolicyOperation,
  PolicyOutcome,
  PolicyReason,
  RuntimePolicyDescription,
} from './runtime-policy.types';
export { RuntimePolicyModule, type RuntimePolicyModuleAsyncOptions } from './runtime-policy.module';
export { AgentEndpoint, ToolEndpoint } from './policy-endpoint.decorator';
export { RuntimePolicyInterceptor } from './runtime-policy.interceptor';
export { AuditRecorder } from './audit-recorder';
export {
  RUNTIME_POLICY_OPTIONS,
  type AgentEndpointOptions,
  type AuditDecisions,
  type RequestExtractor,
  type RuntimePolicyModuleOptions,
  type ToolEndpointOptions,
} from './runtime-policy.constants';
export { denialStatus } from './policy-http';
export { PostgresAuditLog, GENESIS_HASH, type PostgresAuditLogDeps } from './postgres-audit-log';
export { verifyAuditChain, type AuditChainBreak, type AuditChainReport, type VerifyAuditChainOptions } from './audit-chain';
export { AUDIT_HEAD_TABLE_SPEC, AUDIT_LOG_TABLE_SPEC } from './audit-log.schema';
