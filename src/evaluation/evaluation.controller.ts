import { Body, Controller, Get, HttpCode, HttpException, Inject, Param, Post, Put, Query, Req, UseFilters } from '@nestjs/common';
import { AgentRuntimeExceptionFilter } from '../http/agent-runtime-exception.filter';
import { httpErrorBody } from '../http/http-error-mapper';
import { JsonOnly } from '../http/json-only.guard';
import type { Principal } from '../http/principal';
import { EvalServiceError } from './eval.errors';
import type { EvalBaselineRecord, EvalBaselineWithResult, EvalResult, EvalScope, PublicEvalJob } from './eval.types';
import type { EvalRegressionReport } from './executor/regression-report';
import { baselineBodyOf, compareParamsOf, pageOptionsOf, type EvalQueryParams } from './evaluation-http-params';
import { EVALUATION_MODULE_OPTIONS, type ResolvedEvaluationModuleOptions } from './evaluation-module-options';
import { checkEvalScope } from './eval-scope';
import { EvalService } from './service/eval-service';

/**
 * The `/evaluations` routes (spec 05 §10, plus the regression report). The scope of a request comes
 * only from the application: its principal (`resolvePrincipal`; none is 401 `unauthenticated`), mapped
 * by `resolveScope` or to `{app: principal.id}`. Without principal options and without `resolveScope`
 * every route answers 404; a throwing or invalid `resolveScope` answers 401 `invalid_eval_scope`. The POST
 * and PUT routes read `application/json` only (415 `unsupported_media_type` otherwise, before the scope is resolved).
 */
@Controller('evaluations')
@UseFilters(AgentRuntimeExceptionFilter)
@JsonOnly()
export class EvaluationController {
  constructor(
    @Inject(EVALUATION_MODULE_OPTIONS) private readonly options: ResolvedEvaluationModuleOptions,
    @Inject(EvalService) private readonly service: EvalService,
  ) {}

  @Post()
  @HttpCode(201)
  async submit(@Body() body: unknown, @Req() request: unknown): Promise<{ job: PublicEvalJob }> {
    const scope = await this.scopeOf(request);
    // no body at all: the same answer as a body that is not an object
    if (body === undefined) throw new EvalServiceError('invalid_eval_request', { reason: 'not_object' });
    return { job: await this.service.submit(scope, body) };
  }

  @Get()
  async list(@Query() query: EvalQueryParams, @Req() request: unknown): Promise<{ jobs: readonly PublicEvalJob[]; next_cursor: string | null; has_more: boolean }> {
    const scope = await this.scopeOf(request);
    const page = await this.service.listJobs(scope, pageOptionsOf(query));
    return { jobs: page.items, next_cursor: page.next_cursor, has_more: page.has_more };
  }

  @Put('baselines/:evalSetId/:name')
  async putBaseline(@Param('evalSetId') evalSetId: string, @Param('name') name: string, @Body() body: unknown, @Req() request: unknown): Promise<{ baseline: EvalBaselineRecord }> {
    const scope = await this.scopeOf(request);
    return { baseline: await this.service.putBaseline(scope, { evalSetId, name, jobId: baselineBodyOf(body) }) };
  }

  @Get('baselines/:evalSetId/:name')
  async getBaseline(@Param('evalSetId') evalSetId: string, @Param('name') name: string, @Req() request: unknown): Promise<{ baseline: EvalBaselineWithResult }> {
    return { baseline: await this.service.getBaseline(await this.scopeOf(request), evalSetId, name) };
  }

  @Get('jobs/:jobId/compare')
  async compare(@Param('jobId') jobId: string, @Query() query: EvalQueryParams, @Req() request: unknown): Promise<{ report: EvalRegressionReport }> {
    const scope = await this.scopeOf(request);
    const params = compareParamsOf(query);
    const job = await this.service.status(scope, jobId);
    return { report: await this.service.compare(scope, jobId, { evalSetId: job.eval_set_id, ...params }) };
  }

  @Get(':jobId')
  async status(@Param('jobId') jobId: string, @Req() request: unknown): Promise<{ job: PublicEvalJob }> {
    return { job: await this.service.status(await this.scopeOf(request), jobId) };
  }

  @Get(':jobId/result')
  async result(@Param('jobId') jobId: string, @Req() request: unknown): Promise<{ result: EvalResult }> {
    return { result: await this.service.result(await this.scopeOf(request), jobId) };
  }

  @Post(':jobId/cancel')
  @HttpCode(202)
  async cancel(@Param('jobId') jobId: string, @Req() request: unknown): Promise<{ job: PublicEvalJob }> {
    return { job: await this.service.cancel(await this.scopeOf(request), jobId) };
  }

  private async scopeOf(request: unknown): Promise<EvalScope> {
    const { resolveScope: resolve, principals } = this.options;
    if (resolve === undefined && !principals.enabled) throw new HttpException(httpErrorBody(404, 'not_found'), 404);
    const principal = principals.enabled ? await principals.principalOf(request) : null;
    if (resolve === undefined) return checkEvalScope({ app: (principal as Principal).id });
    let scope: unknown;
    try {
      scope = await resolve(request, principal);
    } catch {
      throw new EvalServiceError('invalid_eval_scope');
    }
    return checkEvalScope(scope);
  }
}
