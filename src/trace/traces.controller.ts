import { Controller, Get, HttpException, Inject, Optional, Query, Req, UseFilters } from '@nestjs/common';
import { AgentRuntimeExceptionFilter } from '../http/agent-runtime-exception.filter';
import { httpErrorBody } from '../http/http-error-mapper';
import { traceQueryOf, type TraceQueryParams } from './query/trace-query-params';
import { TraceStore } from './trace-store';
import { TRACE_STORE_MODULE_OPTIONS, type ResolvedTraceStoreModuleOptions } from './trace-store-module-options';
import { TraceStoreError } from './trace-store.errors';
import type { TracePage } from './trace-store.types';

/**
 * `GET /traces` (spec 06 §11): a page of the calling principal's records. The principal comes only
 * from the application's `resolvePrincipal`; without one the route answers 404, so no request is
 * ever mapped to a principal by default.
 */
@Controller('traces')
@UseFilters(AgentRuntimeExceptionFilter)
export class TracesController {
  constructor(
    @Inject(TRACE_STORE_MODULE_OPTIONS) private readonly options: ResolvedTraceStoreModuleOptions,
    @Optional() @Inject(TraceStore) private readonly store: TraceStore | null,
  ) {}

  @Get()
  async page(@Query() params: TraceQueryParams, @Req() request: unknown): Promise<TracePage> {
    const resolve = this.options.resolvePrincipal;
    if (resolve === undefined) throw new HttpException(httpErrorBody(404, 'not_found'), 404);
    if (!this.options.enabled || this.store === null) throw new TraceStoreError('trace_store_unavailable', {});
    const { selector, options } = traceQueryOf(params);
    let principal: unknown;
    try {
      principal = await resolve(request);
    } catch {
      throw new TraceStoreError('invalid_trace_principal', {});
    }
    if (typeof principal !== 'string') throw new TraceStoreError('invalid_trace_principal', {});
    return this.store.query(principal, selector, options);
  }
}
