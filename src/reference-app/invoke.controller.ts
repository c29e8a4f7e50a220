import { requestValidationExceptionFactory } from '../http/request-body-validation.pipe';
import { Body, Controller, ExecutionContext, HttpCode, HttpException, Inject, type OnApplicationShutdown, Param, Post, ValidationPipe } from '@nestjs/common';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { Admission, AdmissionPermit, AdmissionSignal } from '../admission/admission.decorator';
import { JsonOnly } from '../http/json-only.guard';
import type { Permit } from '../admission/permit';
import { finishWithRetry } from '../ledger/finish-retry';
import { InvocationLedger } from '../ledger/invocation-ledger';
import { systemClock } from '../shared/time/clock';
import { sleep } from '../shared/time/timeout';
import { tenantOf } from './reference-tenant';

/** Body of `POST /agents/:agent/invoke` and `/invoke-now`. */
export class InvokeRequest {
  /** How long the simulated agent works. @default 200 */
  @IsOptional() @IsInt() @Min(0) @Max(60_000)
  work_ms?: number;
}

const agentFromRoute = (context: ExecutionContext) => context.switchToHttp().getRequest<{ params: Record<string, string> }>().params.agent;

/** Retries bounded by time rather than count: repeated connection cuts can fail several attempts in a row. */
// retried until it lands, within the claim's lease (work_ms + 30 s): a database that drops connections
// again and again for seconds (the outage e2e on a busy 2-core machine) must not leave a row `running`
const FINISH_RETRY = Object.freeze({ attempts: 40, maxElapsedMs: 25_000 });

const cancelled = () => new HttpException({ status_code: 499, error: 'Client Closed Request', code: 'cancelled' }, 499);

const validBody = new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, exceptionFactory: requestValidationExceptionFactory });

/** What an invocation answers once its work is done. */
export interface InvokeAnswer {
  invocation_id: string;
  agent_id: string;
  work_ms: number;
  completed: true;
}

/**
 * Simulated agent work admitted per agent (the agent id is the route parameter) and per tenant (the
 * `x-tenant-id` header, see `tenantOf`). Each admitted call
 * is recorded in the invocation ledger: created and claimed in one statement (an outage cannot leave
 * it created and unclaimed), then finished `completed` or `cancelled` with bounded retries, so
 * `GET /invocations/:id` shows its durable record. A claim that failed is answered at once and
 * ended `failed` in the background in case it committed unanswered. A row whose finish never
 * landed keeps its lease and is failed by the lease recovery once the lease ends.
 */
@Controller('agents')
@JsonOnly()
export class InvokeController implements OnApplicationShutdown {
  /** Stops the background endings of unanswered claims when the app closes (the lease recovery covers them). */
  private readonly shutdown = new AbortController();

  constructor(@Inject(InvocationLedger) private readonly ledger: InvocationLedger) {
    // Every background ending listens while it waits between attempts; an outage under load runs
    // many at once (each ends within its 25 s bound), which is not a leak.
    setMaxListeners(0, this.shutdown.signal);
  }

  onApplicationShutdown(): void {
    this.shutdown.abort();
  }

  /** Waits for capacity in the queue (the service's overflow). A POST without a body (and without a `Content-Type`) works with the defaults. */
  @Post(':agent/invoke')
  @HttpCode(200)
  @Admission(agentFromRoute, { tenant: tenantOf })
  invoke(
    @Param('agent') agentId: string,
    @Body(validBody) body: InvokeRequest = {},
    @AdmissionPermit() permit: Permit,
    @AdmissionSignal() signal: AbortSignal,
  ): Promise<InvokeAnswer> {
    return this.work(agentId, body.work_ms ?? 200, permit, signal);
  }

  /** The same work without waiting: no capacity, or the tenant over its rate, answers 429 at once. */
  @Post(':agent/invoke-now')
  @HttpCode(200)
  @Admission(agentFromRoute, { tenant: tenantOf, overflow: 'reject' })
  invokeNow(
    @Param('agent') agentId: string,
    @Body(validBody) body: InvokeRequest = {},
    @AdmissionPermit() permit: Permit,
    @AdmissionSignal() signal: AbortSignal,
  ): Promise<InvokeAnswer> {
    return this.work(agentId, body.work_ms ?? 200, permit, signal);
  }

  private async work(agentId: string, workMs: number, permit: Permit, signal: AbortSignal): Promise<InvokeAnswer> {
    const id = randomUUID();
    const metadata = { workflowId: agentId, workflowVersion: '1', kind: 'agent_run' };
    const ownerToken = randomUUID();
    try {
      await this.ledger.createAndClaim(id, metadata, { step: 'admitted' }, { ownerToken, leaseMs: workMs + 30_000 });
    } catch (error) {
      this.endUnansweredClaim(id, ownerToken);
      throw error;
    }
    try {
      await sleep(workMs, systemClock, signal);
      if (permit.signal.aborted) throw cancelled();
    } catch {
      const reason = permit.signal.aborted ? 'permit_revoked' : 'client_disconnected';
      await finishWithRetry(this.ledger, id, ownerToken, 'cancelled', { reason }, { step: 'cancelled' }, FINISH_RETRY).catch(() => undefined);
      throw cancelled();
    }
    await finishWithRetry(this.ledger, id, ownerToken, 'completed', { work_ms: workMs }, { step: 'done' }, FINISH_RETRY);
    return { invocation_id: id, agent_id: agentId, work_ms: workMs, completed: true };
  }

  /**
   * A claim whose answer was lost may still have committed; the caller gets the error at once (an
   * outage answers 503 without waiting out these retries), and the row, if there is one, is ended
   * `failed` in the background instead of waiting out its lease. The owner token was chosen here,
   * so the fence holds; `not_found` means nothing was committed.
   */
  private endUnansweredClaim(id: string, ownerToken: string): void {
    const retry = { ...FINISH_RETRY, signal: this.shutdown.signal };
    void finishWithRetry(this.ledger, id, ownerToken, 'failed', { reason: 'claim_unanswered' }, { step: 'admitted' }, retry).catch(() => undefined);
  }
}
