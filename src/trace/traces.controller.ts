import { Controller, Get, Inject, Optional, Query, Req, UseFilters } from '@nestjs/common';
import { AgentRuntimeExceptionFilter } from '../http/agent-runtime-exception.filter';
import { traceQueryOf, type TraceQueryParams } from './query/trace-query-params';
import { TraceStore } from './trace-store';
import { TRACE_STORE_MODULE_OPTIONS, type ResolvedTraceStoreModuleOptions } from './trace-store-module-options';
import { TraceStoreError } from './trace-store.errors';
import type { TracePage } from './trace-store.types';

/**
 * `GET /traces` (spec 06 §11): a page of the calling principal's records. The partition is the id of
 * the principal the application's `resolvePrincipal` answers, never anything the query or a header
 * names; without a resolver (and without `allowAnonymous`) the route answers 404, and a request
 * without a principal 401 `unauthenticated`.
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
    const principal = await this.options.principals.principalOf(request);
    if (!this.options.enabled || this.store === null) throw new TraceStoreError('trace_store_unavailable', {});
    const { selector, options } = traceQueryOf(params);
    return this.store.query(principal.id, selector, options);
  }
}
