/** `nest-agent-runtime/http`: the package's HTTP error answers, the body limits, the body pipe and the JSON-only guard. */
export { AgentRuntimeExceptionFilter } from './agent-runtime-exception.filter';
export { useJsonBodyLimits, type JsonBodyLimitsOptions } from './json-body-limits';
export { jsonDepthVerifier } from './json-depth-limit';
export { requestValidationExceptionFactory, JsonObjectBodyPipe } from './request-body-validation.pipe';
export { HttpRequestError, type HttpRequestErrorCode } from './http-request.errors';
export type { HttpErrorBody } from './http-error-mapper';
export { JsonOnly, JsonOnlyGuard } from './json-only.guard';
export { ANONYMOUS_PRINCIPAL_ID, PrincipalGate, hasRole, type Principal, type PrincipalOptions, type ResolvePrincipal } from './principal';
export { PrincipalError, type PrincipalErrorCode } from './principal.errors';
