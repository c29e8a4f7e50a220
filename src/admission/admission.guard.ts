import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { HttpAdapterHost, Reflector } from '@nestjs/core';
import type { ServerResponse } from 'node:http';
import { isValidId } from '../shared/id-rule';
import { AdmissionController } from './admission-controller';
import { admissionHttpException } from './admission-http';
import { releaseOnce } from './admission-release';
import { ADMISSION_REQUEST_STATE, ADMISSION_ROUTE, type AdmissionRequestState, type AdmissionRouteMetadata } from './admission.constants';
import { AdmissionError } from './admission.errors';

type AdmittedRequest = { [ADMISSION_REQUEST_STATE]?: AdmissionRequestState };

/**
 * Acquires a permit before the handler of a route marked with `@Admission()`; routes without the
 * metadata pass untouched, so the guard may also be registered globally. The permit's owner is the
 * request: it is released by `AdmissionReleaseInterceptor` when the handler settles, or on the
 * response's `close` when the pipeline never reached the interceptor.
 */
@Injectable()
export class AdmissionGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly controller: AdmissionController,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const route = this.reflector.getAllAndOverride<AdmissionRouteMetadata | undefined>(ADMISSION_ROUTE, [context.getHandler(), context.getClass()]);
    if (!route) return true;
    if (context.getType() !== 'http') throw this.fail(new AdmissionError('invalid_admission_options', { field: 'context' }));
    const request = context.switchToHttp().getRequest<AdmittedRequest>();
    const response = context.switchToHttp().getResponse<object>();
    if (request[ADMISSION_REQUEST_STATE]) return true;

    const agentId = this.resolveAgent(route, context);
    const raw = rawResponse(response);
    const owner = new AbortController();
    const disconnect = new AbortController();
    const onClose = () => {
      if (!raw.writableFinished) disconnect.abort(new AdmissionError('cancelled'));
    };
    // the connection may have closed while earlier guards ran: its 'close' will not fire again
    if (isClosed(raw)) onClose();
    else raw.once('close', onClose);

    let permit;
    try {
      permit = await this.controller.acquire(agentId, { ...route.options, owner: owner.signal, signal: disconnect.signal });
    } catch (error) {
      throw this.fail(error, response);
    }
    const state: AdmissionRequestState = { permit, owner, disconnect: disconnect.signal, done: false, interceptorAttached: false };
    request[ADMISSION_REQUEST_STATE] = state;
    raw.once('close', () => {
      if (!state.interceptorAttached) releaseOnce(this.controller, state);
    });
    if (disconnect.signal.aborted || isClosed(raw)) {
      releaseOnce(this.controller, state);
      throw this.fail(new AdmissionError('cancelled'), response);
    }
    return true;
  }

  private resolveAgent(route: AdmissionRouteMetadata, context: ExecutionContext): string {
    let agentId: unknown;
    try {
      agentId = typeof route.agent === 'function' ? route.agent(context) : route.agent;
    } catch {
      // the resolver's exception text is never exposed
      agentId = undefined;
    }
    if (!isValidId(agentId)) throw this.fail(new AdmissionError('invalid_admission_options', { field: 'agentId' }));
    return agentId;
  }

  private fail(error: unknown, response?: object): Error {
    const { exception, retryAfter } = admissionHttpException(error);
    if (retryAfter && response) this.adapterHost.httpAdapter.setHeader(response, 'Retry-After', '1');
    return exception;
  }
}

function isClosed(raw: ServerResponse): boolean {
  return raw.destroyed || raw.closed || raw.socket?.destroyed === true;
}

/** The Node response under an Express response or a Fastify reply. */
function rawResponse(response: object): ServerResponse {
  return ((response as { raw?: ServerResponse }).raw ?? response) as ServerResponse;
}
