export { AdmissionController, type AdmissionControllerDeps } from './admission-controller';
export type { AdmissionConfig, OverflowMode } from './admission-config';
export type { AdaptiveLimitConfig, FlowControlConfig, RatesConfig } from './flow/flow-config';
export type { Rate } from './flow/rate-buckets';
export type { PriorityClass } from './flow/fair-share';
export type { AdmissionRequestOptions } from './admission-request';
export type {
  AdmissionDecisionEvent,
  AdmissionOutcome,
  AdmissionStatus,
  AgentAdmissionStatus,
  OtherTenantsStatus,
  SubmitResult,
  TenantAdmissionStatus,
} from './admission.types';
export { AdmissionError, type AdmissionErrorCode } from './admission.errors';
export type { Permit, RevocationOutcome, WorkReport } from './permit';
export { AdmissionModule, type AdmissionModuleAsyncOptions, type AdmissionOptionsFactory } from './admission.module';
export { AdmissionGuard, type AgentIdSource } from './admission.guard';
export { AdmissionReleaseInterceptor } from './admission-release.interceptor';
export { AdmissionHealthIndicator } from './admission.health';
export { Admission, AdmissionPermit, AdmissionSignal } from './admission.decorator';
export { ADMISSION_OPTIONS, ADMISSION_SERVICE, type AdmissionRouteOptions } from './admission.constants';
export type { AdmissionService, PermitSource } from './admission-service';
export type { AdmissionModuleOptions } from './admission.module';
export type { ClusterAdmissionModuleOptions } from './admission-service.providers';
export { ClusterAdmissionController, type ClusterAdmissionControllerDeps } from './cluster/cluster-admission-controller';
export type { ClusterAdmissionOptions } from './cluster/cluster-admission-options';
export type { ClusterAdmissionStatus } from './cluster/cluster-admission.types';
export type { AdmissionErrorBody } from './admission-http';
export { statusWithoutTenantIds } from './status-without-tenants';
