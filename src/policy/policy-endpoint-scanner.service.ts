import { Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { isValidSubject } from './policy-name';
import { AGENT_ENDPOINT, TOOL_ENDPOINT, type AgentEndpointOptions, type ToolEndpointOptions } from './runtime-policy.constants';
import { RuntimePolicyError } from './runtime-policy.errors';

/**
 * At bootstrap, checks every `@AgentEndpoint`/`@ToolEndpoint` handler: the name must be a valid
 * subject and a handler may carry only one of the two. A violation fails start-up with
 * `invalid_runtime_policy_module_options`.
 */
@Injectable()
export class PolicyEndpointScanner implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    for (const wrapper of this.discovery.getControllers()) {
      const prototype = wrapper.metatype?.prototype as Record<string, unknown> | undefined;
      if (!prototype) continue;
      for (const method of this.scanner.getAllMethodNames(prototype)) this.check(prototype[method] as object);
    }
  }

  private check(handler: object): void {
    const agent = this.reflector.get<AgentEndpointOptions | undefined>(AGENT_ENDPOINT, handler as () => void);
    const tool = this.reflector.get<ToolEndpointOptions | undefined>(TOOL_ENDPOINT, handler as () => void);
    if (agent && tool) throw new RuntimePolicyError('invalid_runtime_policy_module_options', { field: 'endpoint' });
    if (agent && !isValidSubject(agent.agent)) throw new RuntimePolicyError('invalid_runtime_policy_module_options', { field: 'agent' });
    if (tool && !isValidSubject(tool.tool)) throw new RuntimePolicyError('invalid_runtime_policy_module_options', { field: 'tool' });
  }
}
