import { Body, Controller, ExecutionContext, HttpCode, HttpException, Param, Post, ValidationPipe } from '@nestjs/common';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { setTimeout as sleep } from 'node:timers/promises';
import { Admission, AdmissionPermit, AdmissionSignal } from '../admission/admission.decorator';
import type { Permit } from '../admission/permit';

/** Body of `POST /agents/:agent/invoke`. */
export class InvokeRequest {
  /** How long the simulated agent works. @default 200 */
  @IsOptional() @IsInt() @Min(0) @Max(60_000)
  work_ms?: number;
}

const agentFromRoute = (context: ExecutionContext) => context.switchToHttp().getRequest<{ params: Record<string, string> }>().params.agent;

/** Simulated agent work admitted per agent (the agent id is the route parameter). */
@Controller('agents')
export class InvokeController {
  @Post(':agent/invoke')
  @HttpCode(200)
  @Admission(agentFromRoute)
  async invoke(
    @Param('agent') agentId: string,
    @Body(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true })) body: InvokeRequest,
    @AdmissionPermit() permit: Permit,
    @AdmissionSignal() signal: AbortSignal,
  ): Promise<{ agent_id: string; work_ms: number; completed: true }> {
    const workMs = body.work_ms ?? 200;
    try {
      await sleep(workMs, undefined, { signal });
    } catch {
      throw new HttpException({ status_code: 499, error: 'Client Closed Request', code: 'cancelled' }, 499);
    }
    if (permit.signal.aborted) throw new HttpException({ status_code: 499, error: 'Client Closed Request', code: 'cancelled' }, 499);
    return { agent_id: agentId, work_ms: workMs, completed: true };
  }
}
