import { applyDecorators, SetMetadata, UseInterceptors } from '@nestjs/common';
import { AGENT_ENDPOINT, TOOL_ENDPOINT, type AgentEndpointOptions, type ToolEndpointOptions } from './runtime-policy.constants';
import { RuntimePolicyInterceptor } from './runtime-policy.interceptor';

/**
 * Checks the request with `checkAgent(agent, input)` before the handler, and every value the
 * handler emits with `checkContent('model_output', value)` before it is sent.
 *
 * @example
 * @Post('agents/helper') @AgentEndpoint({ agent: 'helper', input: (req) => req.body.prompt })
 */
export function AgentEndpoint(options: AgentEndpointOptions): MethodDecorator {
  return applyDecorators(SetMetadata(AGENT_ENDPOINT, Object.freeze({ ...options })), UseInterceptors(RuntimePolicyInterceptor));
}

/**
 * Checks the request with `checkTool(tool, args)` before the handler, and every value the handler
 * emits with `checkContent('tool_result', value)` before it is sent.
 *
 * @example
 * @Post('tools/search') @ToolEndpoint({ tool: 'search' })
 */
export function ToolEndpoint(options: ToolEndpointOptions): MethodDecorator {
  return applyDecorators(SetMetadata(TOOL_ENDPOINT, Object.freeze({ ...options })), UseInterceptors(RuntimePolicyInterceptor));
}
