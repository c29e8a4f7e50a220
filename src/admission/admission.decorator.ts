import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata, UseGuards, UseInterceptors } from '@nestjs/common';
import { AdmissionGuard, type AdmissionRouteMetadata, type AgentIdSource } from './admission.guard';
import { AdmissionReleaseInterceptor } from './admission-release.interceptor';
import { admissionStateOf, ADMISSION_ROUTE, type AdmissionRequestState, type AdmissionRouteOptions } from './admission.constants';

/**
 * Admits requests of a controller or handler (handler metadata wins) for `agent`: a fixed id or a
 * resolver of the execution context. `options` may name the request's `tenant`, `cost` and
 * `priority` (spec 09 §1), each fixed or resolved from the execution context like the agent.
 * Applies `AdmissionGuard` and `AdmissionReleaseInterceptor`.
 *
 * @example
 * @Post('agents/:agent/invoke')
 * @Admission((ctx) => ctx.switchToHttp().getRequest().params.agent, {
 *   overflow: 'queue',
 *   tenant: (ctx) => ctx.switchToHttp().getRequest().headers['x-tenant'],
 *   priority: 'high',
 * })
 * invoke(@AdmissionSignal() signal: AbortSignal) { ... }
 */
export function Admission(agent: AgentIdSource, options: AdmissionRouteOptions<ExecutionContext> = {}): ClassDecorator & MethodDecorator {
  const metadata: AdmissionRouteMetadata = Object.freeze({ agent, options: Object.freeze({ ...options }) });
  return applyDecorators(SetMetadata(ADMISSION_ROUTE, metadata), UseGuards(AdmissionGuard), UseInterceptors(AdmissionReleaseInterceptor));
}

function stateOf(context: ExecutionContext): AdmissionRequestState | undefined {
  if (context.getType() !== 'http') return undefined;
  return admissionStateOf(context.switchToHttp().getRequest<object>());
}

/** The request's `Permit` (`undefined` on a route without admission). */
export const AdmissionPermit = createParamDecorator((_: unknown, context: ExecutionContext) => stateOf(context)?.permit);

/**
 * A signal for the handler's work: it aborts when the client disconnects before the response is
 * written, or when the permit is revoked. The permit itself stays held until the handler settles.
 * `undefined` on a route without admission.
 */
export const AdmissionSignal = createParamDecorator((_: unknown, context: ExecutionContext) => {
  return stateOf(context)?.signal;
});
