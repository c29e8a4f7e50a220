export { EvalService, type EvalCapabilities, type EvalCompareOptions, type EvalServiceDeps, type EvalServiceLogger, type EvalServiceState } from './service/eval-service';
export type { EvalOwnership, EvalServiceOptions, EvalWorkerModule } from './service/eval-service-options';
export type { PreparationOptions } from './preparation/preparation-options';
export { PostgresEvalStore } from './store/postgres-eval-store';
export type { PostgresEvalStoreOptions } from './store/eval-store-options';
export { createEvalStoreMigrations } from './store/eval-store-migration';
export { LocalEvalExecutor, type EvalRunnerRegistry } from './executor/local-eval-executor';
export { compareResults, type EvalRegressionCase, type EvalRegressionMetric, type EvalRegressionReport } from './executor/regression-report';
export { runEvalGate, type EvalGateAgents, type EvalGateAgentsFactory, type EvalGateRequest } from './eval-gate';
export { EvalServiceError, type EvalServiceErrorCode } from './eval.errors';
export type {
  EvalBaselineRecord,
  EvalBaselineWithResult,
  EvalCase,
  EvalCaseResult,
  EvalExecution,
  EvalExecutor,
  EvalIdentitySource,
  EvalJobOptions,
  EvalMetric,
  EvalMetricName,
  EvalMetricResult,
  EvalPage,
  EvalPageOptions,
  EvalPhase,
  EvalPruneOptions,
  EvalPruneReport,
  EvalResult,
  EvalScope,
  EvalSet,
  EvalSetRevision,
  EvalSetSummary,
  EvalStore,
  EvalStoreIdentity,
  EvalTaskOutcome,
  EvalTransitionFields,
  ExpectedToolCall,
  PublicEvalJob,
  ResponseMatchMode,
} from './eval.types';
export { EvaluationModule, type EvaluationModuleAsyncOptions, type EvaluationModuleRootOptions, type EvaluationOptionsFactory } from './evaluation.module';
export type { EvaluationModuleOptions, ResolveEvalScope } from './evaluation-module-options';
export { EvalServiceHealthIndicator } from './evaluation.health';
