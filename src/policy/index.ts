export { canonicalJson, measure, measureContent } from './policy-json';
export type { MeasureResult, UnsupportedJsonKind } from '../json';
export { RuntimePolicy, type RuntimePolicyDeps } from './runtime-policy';
export type { RuntimePolicyRules, RuntimePolicySelector, RuntimePolicySpec } from './runtime-policy-compiler';
export { isPolicyDecision, summarizeDecision, verifyDecisionDigest } from './policy-decision';
export { isValidSubject } from './policy-name';
export { RuntimePolicyError, type RuntimePolicyCompileErrorCode, type RuntimePolicyErrorCode } from './runtime-policy.errors';
export { AuditSink } from './audit-log/audit-sink';
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
export { RuntimePolicyModule, type RuntimePolicyModuleAsyncOptions, type RuntimePolicyOptionsFactory } from './runtime-policy.module';
export { AgentEndpoint, ToolEndpoint } from './policy-endpoint.decorator';
export { RuntimePolicyInterceptor } from './runtime-policy.interceptor';
export type {
  AgentEndpointOptions,
  AuditDecisions,
  RequestExtractor,
  RuntimePolicyModuleOptions,
  ToolEndpointOptions,
} from './runtime-policy.constants';
export { PostgresAuditLog, type PostgresAuditLogDeps } from './audit-log/postgres-audit-log';
export { verifyAuditChain, type AuditChainBreak, type AuditChainReport, type VerifyAuditChainOptions } from './audit-log/audit-chain-verification';
export { AuditChainVerifier } from './audit-log/audit-chain-verifier';

