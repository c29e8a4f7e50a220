import { requestValidationExceptionFactory } from '../http/request-body-validation.pipe';
import { Body, Controller, ExecutionContext, HttpCode, HttpException, Inject, Param, Post, ValidationPipe } from '@nestjs/common';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { randomUUID } from 'node:crypto';
import { Admission, AdmissionPermit, AdmissionSignal } from '../admission/admission.decorator';
import { JsonOnly } from '../http/json-only.guard';
import type { Permit } from '../admission/permit';
import { finishWithRetry } from '../ledger/finish-retry';
import { InvocationLedger } from '../ledger/invocation-ledger';
import { systemClock } from '../shared/time/clock';
import { sleep } from '../shared/time/timeout';

/** Body of `POST /agents/:agent/invoke`. */
export class InvokeRequest {
  /** How long the simulated agent works. @default 200 */
  @IsOptional() @IsInt() @Min(0) @Max(60_000)
  work_ms?: number;
}

const agentFromRoute = (context: ExecutionContext) => context.switchToHttp().getRequest<{ params: Record<string, string> }>().params.agent;

/** Retries bounded by time rather than count: repeated connection cuts can fail several attempts in a row. */
const FINISH_RETRY = Object.freeze({ attempts: 10, maxElapsedMs: 5000 });

const cancelled = () => new HttpException({ status_code: 499, error: 'Client Closed Request', code: 'cancelled' }, 499);

/**
 * Simulated agent work admitted per agent (the agent id is the route parameter). Each admitted call
 * is recorded in the invocation ledger: created and claimed in one statement (an outage cannot leave
 * it created and unclaimed), then finished `completed` or `cancelled` with bounded retries, so
 * `GET /invocations/:id` shows its durable record. A claim that failed is ended `failed` at once
 * in case it committed unanswered. A row whose finish never landed keeps its lease
 * and is failed by the lease recovery once the lease ends.
 */
@Controller('agents')
@JsonOnly()
export class InvokeController {
  constructor(@Inject(InvocationLedger) private readonly ledger: InvocationLedger) {}

  /** A POST without a body (and without a `Content-Type`) works with the defaults. */
  @Post(':agent/invoke')
  @HttpCode(200)
  @Admission(agentFromRoute)
  async invoke(
    @Param('agent') agentId: string,
    @Body(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, exceptionFactory: requestValidationExceptionFactory })) body: InvokeRequest = {},
    @AdmissionPermit() permit: Permit,
    @AdmissionSignal() signal: AbortSignal,
  ): Promise<{ invocation_id: string; agent_id: string; work_ms: number; completed: true }> {
    const workMs = body.work_ms ?? 200;
    const id = randomUUID();
    const metadata = { workflowId: agentId, workflowVersion: '1', kind: 'agent_run' };
    const ownerToken = randomUUID();
    try {
      await this.ledger.createAndClaim(id, metadata, { step: 'admitted' }, { ownerToken, leaseMs: workMs + 30_000 });
    } catch (error) {
      await this.endUnansweredClaim(id, ownerToken);
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
   * A claim whose answer was lost may still have committed; the caller gets the error either way,
   * so the row (if there is one) is ended `failed` at once instead of waiting out its lease. The
   * owner token was chosen here, so the fence holds; `not_found` means nothing was committed.
   */
  private async endUnansweredClaim(id: string, ownerToken: string): Promise<void> {
    await finishWithRetry(this.ledger, id, ownerToken, 'failed', { reason: 'claim_unanswered' }, { step: 'admitted' }, FINISH_RETRY).catch(() => undefined);
  }
}
