export { AgentRuntimeHealthModule } from './agent-runtime-health.module';
export type { AgentRuntimeHealthOptions } from './health-options';
export { AgentRuntimeHealthError, type AgentRuntimeHealthErrorCode } from './health.errors';
export { ReadinessIndicator, type ComponentHealthIndicator } from './readiness-indicator.decorator';
export { indicatorResult, type ComponentHealth, type ComponentHealthResult, type ReadinessReport } from './readiness-report';
export { ReadinessService } from './readiness.service';
export {
  ShutdownCoordinator,
  type ShutdownCounts,
  type ShutdownParticipant,
  type ShutdownPhase,
  type ShutdownState,
  type ShutdownStepRecord,
} from './shutdown-coordinator';
