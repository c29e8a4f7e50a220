import { Body, Controller, HttpCode, Param, Post, type ExecutionContext } from '@nestjs/common';
import { Admission, AdmissionPermit, type Permit } from 'nest-agent-runtime/admission';
import { ToolEndpoint } from 'nest-agent-runtime/policy';

/** Reads the agent id of an admitted route from its path. */
const agentOf = (context: ExecutionContext): string => context.switchToHttp().getRequest<{ params: { agent: string } }>().params.agent;

/** An agent endpoint behind admission control. */
@Controller('agents')
export class AgentsController {
  @Post(':agent/invoke')
  @HttpCode(200)
  @Admission(agentOf, { queueTimeoutMs: 2_000 })
  invoke(@Param('agent') agent: string, @AdmissionPermit() permit: Permit | undefined): { agent: string; admitted: boolean } {
    return { agent, admitted: permit !== undefined };
  }
}

/** Tool endpoints behind the runtime policy: `search` is allowed, `shell` denied (403 and an audit row). */
@Controller('tools')
export class ToolsController {
  @Post('search')
  @HttpCode(200)
  @ToolEndpoint({ tool: 'search' })
  search(@Body() args: { query?: string }): { hits: string[] } {
    return { hits: [`result for ${args.query ?? ''}`] };
  }

  @Post('shell')
  @ToolEndpoint({ tool: 'shell' })
  shell(): { ran: boolean } {
    return { ran: true };
  }
}
