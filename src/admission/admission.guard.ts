import { CanActivate, ExecutionContext, HttpException, Inject, Injectable } from '@nestjs/common';
import { HttpAdapterHost, Reflector } from '@nestjs/core';
import { ServerResponse } from 'node:http';
import { retryAfterHeader } from '../http/http-error-mapper';
import type { AdmissionService } from './admission-service';
import { admissionFailureResponse } from './admission-http';
import { AdmittedRequest, releaseOnce } from './admission-release';
import type { AdmissionRequestOptions } from './admission-request';
import { agentIdOf, compileRoute, requestOptionsOf, type AdmissionRouteMetadata, type CompiledRoute } from './admission-route';
import { admissionStateOf, attachAdmissionState, ADMISSION_ROUTE, ADMISSION_SERVICE } from './admission.constants';
import { AdmissionError } from './admission.errors';
import type { SubmitResult } from './admission.types';
import type { Permit } from './permit';

export type { AdmissionRouteMetadata } from './admission-route';

/** The agent of a route: a fixed id, or a resolver reading the request. */
export type AgentIdSource = string | ((context: ExecutionContext) => string);

/**
 * Acquires a permit before the handler of a route marked with `@Admission()`; routes without the
 * metadata pass untouched, so the guard may also be registered globally. The permit's owner is the
 * request: it is released by `AdmissionReleaseInterceptor` when the handler settles, or on the
 * response's `close` when the pipeline never reached the interceptor. A permit granted at once
 * answers synchronously (`true`), so Nest adds no promise hop.
 */
@Injectable()
export class AdmissionGuard implements CanActivate {
  private readonly routes = new WeakMap<object, WeakMap<object, CompiledRoute | null>>();
  private defaultOverflow: string | undefined;

  constructor(
    private readonly reflector: Reflector,
    @Inject(ADMISSION_SERVICE) private readonly controller: AdmissionService,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const route = this.routeOf(context);
    if (!route) return true;
    if (context.getType() !== 'http') throw this.fail(new AdmissionError('invalid_admission_options', { field: 'context' }));
    const http = context.switchToHttp();
    const request = http.getRequest<object>();
    if (admissionStateOf(request)) return true;
    const response = http.getResponse<object>();

    let agentId: string;
    let routeOptions: AdmissionRequestOptions;
    try {
      agentId = agentIdOf(route.metadata.agent, context);
      routeOptions = requestOptionsOf(route, context);
    } catch (error) {
      throw this.fail(error);
    }
    const raw = rawResponse(response);
    const state = new AdmittedRequest();
    // one listener: the disconnect signal while queued or running, and the release fallback when
    // the pipeline never reached the interceptor
    const onClose = () => {
      if (!raw.writableFinished) state.disconnect();
      if (admissionStateOf(request) === state && !state.interceptorAttached) releaseOnce(this.controller, state);
    };
    // the connection may have closed while earlier guards ran: its 'close' will not fire again
    const closedBefore = isClosed(raw);
    if (closedBefore) onClose();
    else raw.on('close', onClose);

    let submitted;
    try {
      const options: AdmissionRequestOptions = route.mayQueue || state.disconnected ? { ...routeOptions, signal: state.disconnectSignal } : routeOptions;
      submitted = this.controller.submit(agentId, options);
    } catch (error) {
      throw this.fail(error, response);
    }
    // a cluster controller decides in a database transaction
    if (!('status' in submitted)) {
      return submitted.then(
        (result) => this.afterSubmit(request, response, state, result, isClosed(raw)),
        (error: unknown) => {
          throw this.fail(error, response);
        },
      );
    }
    // granted in the same tick: the connection cannot have closed since it was last looked at
    return this.afterSubmit(request, response, state, submitted, closedBefore);
  }

  private afterSubmit(request: object, response: object, state: AdmittedRequest, submitted: SubmitResult, closed: boolean): true | Promise<true> {
    if (submitted.status === 'granted') return this.admitted(request, response, state, submitted.permit, closed);
    const raw = rawResponse(response);
    return this.controller.await(submitted.requestRef).then(
      (permit) => this.admitted(request, response, state, permit, isClosed(raw)),
      (error: unknown) => {
        throw this.fail(error, response);
      },
    );
  }

  private admitted(request: object, response: object, state: AdmittedRequest, permit: Permit, closed: boolean): true {
    state.permit = permit;
    attachAdmissionState(request, state);
    if (state.disconnected || closed) {
      releaseOnce(this.controller, state);
      throw this.fail(new AdmissionError('cancelled'), response);
    }
    return true;
  }

  private routeOf(context: ExecutionContext): CompiledRoute | null {
    const handler = context.getHandler();
    const type = context.getClass();
    let byClass = this.routes.get(handler);
    if (byClass === undefined) this.routes.set(handler, (byClass = new WeakMap()));
    let route = byClass.get(type);
    if (route === undefined) {
      // metadata is written by decorators at class definition, so one read per handler and class suffices
      const metadata = this.reflector.getAllAndOverride<AdmissionRouteMetadata | undefined>(ADMISSION_ROUTE, [handler, type]);
      route = metadata ? compileRoute(metadata, () => this.controllerOverflow()) : null;
      byClass.set(type, route);
    }
    return route;
  }

  private controllerOverflow(): string {
    return (this.defaultOverflow ??= this.controller.status().overflow);
  }

  private fail(error: unknown, response?: object): Error {
    const answer = admissionFailureResponse(error);
    const retryAfter = retryAfterHeader(answer);
    if (retryAfter !== undefined && response) this.adapterHost.httpAdapter.setHeader(response, 'Retry-After', retryAfter);
    return new HttpException(answer.body, answer.status);
  }
}

function isClosed(raw: ServerResponse): boolean {
  return raw.destroyed || raw.closed || raw.socket?.destroyed === true;
}

/** The Node response under an Express response or a Fastify reply. */
function rawResponse(response: object): ServerResponse {
  // an Express response is the Node response: no lookup of a missing `raw` through its long prototype chain
  if (response instanceof ServerResponse) return response;
  return ((response as { raw?: ServerResponse }).raw ?? response) as ServerResponse;
}
