import { Body, Controller, ExecutionContext, HttpCode, HttpException, Inject, Param, Post, ValidationPipe } from '@nestjs/common';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Admission, AdmissionPermit, AdmissionSignal } from '../admission/admission.decorator';
import type { Permit } from '../admission/permit';
import { InvocationLedger } from '../ledger/invocation-ledger';

/** Body of `POST /agents/:agent/invoke`. */
export class InvokeRequest {
  /** How long the simulated agent works. @default 200 */
  @IsOptional() @IsInt() @Min(0) @Max(60_000)
  work_ms?: number;
}

const agentFromRoute = (context: ExecutionContext) => context.switchToHttp().getRequest<{ params: Record<string, string> }>().params.agent;

const cancelled = () => new HttpException({ status_code: 499, error: 'Client Closed Request', code: 'cancelled' }, 499);

/**
 * Simulated agent work admitted per agent (the agent id is the route parameter). Each admitted call
 * is recorded in the invocation ledger: created, claimed under a lease, finished `completed` or
 * `cancelled`, so `GET /invocations/:id` shows its durable record.
 */
@Controller('agents')
export class InvokeController {
  constructor(@Inject(InvocationLedger) private readonly ledger: InvocationLedger) {}

  @Post(':agent/invoke')
  @HttpCode(200)
  @Admission(agentFromRoute)
  async invoke(
    @Param('agent') agentId: string,
    @Body(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true })) body: InvokeRequest,
    @AdmissionPermit() permit: Permit,
    @AdmissionSignal() signal: AbortSignal,
  ): Promise<{ invocation_id: string; agent_id: string; work_ms: number; completed: true }> {
    const workMs = body.work_ms ?? 200;
    const id = randomUUID();
    await this.ledger.create(id, { workflowId: agentId, workflowVersion: '1', kind: 'agent_run' }, { step: 'admitted' });
    const { ownerToken } = await this.ledger.claim(id, { leaseMs: workMs + 30_000 });
    try {
      await sleep(workMs, undefined, { signal });
      if (permit.signal.aborted) throw cancelled();
    } catch {
      await this.ledger.finish(id, ownerToken, 'cancelled', null, { step: 'cancelled' }).catch(() => undefined);
      throw cancelled();
    }
    await this.ledger.finish(id, ownerToken, 'completed', { work_ms: workMs }, { step: 'done' });
    return { invocation_id: id, agent_id: agentId, work_ms: workMs, completed: true };
  }
}
