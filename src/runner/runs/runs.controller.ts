import { Body, Controller, Get, Headers, HttpCode, Inject, Param, Post, Query, Req, Res, UseFilters } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { AgentRuntimeExceptionFilter } from '../../http/agent-runtime-exception.filter';
import { JsonOnly } from '../../http/json-only.guard';
import { AgentRuntimeError } from '../../shared/errors/agent-runtime-error';
import { systemClock } from '../../shared/time/clock';
import type { Principal } from '../../http/principal';
import { pipeRunEvents, SSE_HEADERS } from './run-events-sse';
import { RunAccess, type RunAction } from './run-access';
import { RunRegistry } from './run-registry';
import type { RunStarted, RunStatusRecord } from './run-registry.types';
import { invalidRunRequest } from './run-registry-request';
import { RunnerError } from '../runner.errors';
import { CancelRunBody, ConfirmationBody, RunBodyPipe, StartRunBody } from './run-request.dto';
import { RUNS_MODULE_OPTIONS, type ResolvedRunsModuleOptions } from './runs-module-options';

const SEQ = /^\d{1,15}$/;

/**
 * The run routes (spec 03 §10). Requests never own a run's execution: they start, read, follow,
 * cancel and confirm runs the {@link RunRegistry} owns, so a client that goes away (also from the
 * event stream) changes nothing about the run. Each run belongs to the principal that started it
 * (the module's `resolvePrincipal`), who is also its user; any other principal acts on it only when
 * `authorizeRun` allows, and is otherwise answered 404 `run_not_found`. Without a resolver (and
 * without `allowAnonymous`) every route answers 404; a request without a principal answers 401
 * `unauthenticated`. Errors answer `{status_code, error, code, details?}` through the package's
 * exception filter, applied here so the routes answer so in any application. Their POSTs read
 * `application/json` only (415 `unsupported_media_type` otherwise, before anything is created).
 */
@Controller('runs')
@UseFilters(AgentRuntimeExceptionFilter)
@JsonOnly()
export class RunsController {
  private readonly access: RunAccess;

  constructor(
    @Inject(RunRegistry) private readonly registry: RunRegistry,
    @Inject(RUNS_MODULE_OPTIONS) private readonly options: ResolvedRunsModuleOptions,
  ) {
    this.access = new RunAccess(options.authorizeRun);
  }

  /**
   * 202 `{run_id, session_id}` as soon as the run is recorded; it is admitted and executed in the
   * background. The caller's principal owns the run and is its user (a body `user_id` is refused).
   */
  @Post()
  @HttpCode(202)
  async start(@Req() request: unknown, @Body(new RunBodyPipe()) body: StartRunBody): Promise<RunStarted> {
    const principal = await this.principalOf(request);
    return this.registry.start({
      agent: body.agent,
      userId: principal.id,
      owner: principal.id,
      message: body.message,
      ...(body.session_id === undefined ? {} : { sessionId: body.session_id }),
      ...(body.durable === undefined ? {} : { durable: body.durable }),
    });
  }

  @Get(':id')
  async get(@Req() request: unknown, @Param('id') runId: string): Promise<RunStatusRecord> {
    await this.allowed(request, 'read', runId);
    return this.registry.get(runId);
  }

  /**
   * `text/event-stream` of the run's items after `Last-Event-ID` (or `?after_seq=`): `id:` seq,
   * `event:` type, `data:` the item as JSON, a heartbeat comment every 15 s, closed after the
   * terminal item. Unknown runs (404), evicted positions (410) and bad positions (400) are answered
   * before the stream opens.
   */
  @Get(':id/events')
  async events(@Req() request: unknown, @Param('id') runId: string, @Headers('last-event-id') lastEventId: unknown, @Query('after_seq') afterSeq: unknown, @Res() response: unknown): Promise<void> {
    await this.allowed(request, 'follow', runId);
    const position = replayPosition(lastEventId, afterSeq);
    const subscription = this.registry.subscribe(runId, { afterSeq: position.seq });
    await subscription.ready().catch((error: unknown) => Promise.reject(positionNamed(error, position.field)));
    const raw = rawResponse(response);
    raw.writeHead(200, SSE_HEADERS);
    raw.flushHeaders();
    await pipeRunEvents(subscription, raw, { clock: systemClock });
  }

  /** 202 with the status record; `{reason?}` of 1..128 characters, default `'cancelled'`. */
  @Post(':id/cancel')
  @HttpCode(202)
  async cancel(@Req() request: unknown, @Param('id') runId: string, @Body(new RunBodyPipe(true)) body: CancelRunBody): Promise<RunStatusRecord> {
    await this.allowed(request, 'cancel', runId);
    return this.registry.cancel(runId, body.reason ?? 'cancelled');
  }

  /** 202 with the status record once the decision is accepted; the resume runs in the background. */
  @Post(':id/confirmations/:callId')
  @HttpCode(202)
  async confirm(@Req() request: unknown, @Param('id') runId: string, @Param('callId') callId: string, @Body(new RunBodyPipe()) body: ConfirmationBody): Promise<RunStatusRecord> {
    const approver = await this.allowed(request, 'confirm', runId);
    return this.registry.confirm(runId, callId, body.payload === undefined ? { confirmed: body.confirmed } : { confirmed: body.confirmed, payload: body.payload }, approver.id);
  }

  private principalOf(request: unknown): Promise<Principal> {
    return this.options.principals.principalOf(request);
  }

  /** The request's principal when it may do `action` on the run; `run_not_found` otherwise. */
  private async allowed(request: unknown, action: RunAction, runId: string): Promise<Principal> {
    const principal = await this.principalOf(request);
    await this.access.check(principal, action, await this.registry.owned(runId));
    return principal;
  }
}

/** The seq to replay after and where it came from: `Last-Event-ID` wins over `after_seq`; both absent is 0. */
function replayPosition(lastEventId: unknown, afterSeq: unknown): { seq: number; field: 'last_event_id' | 'after_seq' } {
  if (lastEventId !== undefined && lastEventId !== '') return { seq: seqOf(lastEventId, 'last_event_id'), field: 'last_event_id' };
  if (afterSeq !== undefined) return { seq: seqOf(afterSeq, 'after_seq'), field: 'after_seq' };
  return { seq: 0, field: 'after_seq' };
}

/** A position the run has not reached yet, named as the client sent it (`Last-Event-ID` is `last_event_id`). */
function positionNamed(error: unknown, field: string): unknown {
  const badPosition = AgentRuntimeError.isAgentRuntimeError(error, RunnerError) && error.code === 'invalid_run_request' && error.details?.field === 'after_seq';
  return badPosition ? invalidRunRequest(field) : error;
}

function seqOf(value: unknown, field: string): number {
  if (typeof value !== 'string' || !SEQ.test(value)) throw invalidRunRequest(field);
  return Number(value);
}

/** Node's response under the platform's (Express's is one; Fastify's reply holds it as `raw` and is hijacked). */
function rawResponse(response: unknown): ServerResponse {
  const reply = response as { raw?: ServerResponse; hijack?: () => void };
  if (reply.raw) {
    reply.hijack?.();
    return reply.raw;
  }
  return response as ServerResponse;
}
