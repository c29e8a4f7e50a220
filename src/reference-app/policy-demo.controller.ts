import { Body, Controller, Get, HttpCode, Inject, Post } from '@nestjs/common';
import { AgentEndpoint, ToolEndpoint } from '../policy/policy-endpoint.decorator';
import { RuntimePolicy } from '../policy/runtime-policy';
import { AuditChainVerifier } from '../policy/audit-log/audit-chain-verifier';
import type { AuditChainReport } from '../policy/audit-log/audit-chain-verification';
import { RuntimePolicyError } from '../policy/runtime-policy.errors';
import { JsonObjectBodyPipe } from '../http/request-body-validation.pipe';
import { JsonOnly } from '../http/json-only.guard';

type ChatBody = { prompt?: unknown };
type SearchBody = { query?: unknown; results?: unknown };

const promptOf = (request: { body?: ChatBody }) => request.body?.prompt ?? '';

/** Agent and tool endpoints behind the runtime policy (see `referencePolicySpec`); their POSTs read JSON only. */
@Controller()
@JsonOnly()
export class PolicyDemoController {
  constructor(
    @Inject(RuntimePolicy) private readonly policy: RuntimePolicy,
    @Inject(AuditChainVerifier) private readonly auditChain: AuditChainVerifier,
  ) {}

  /** Agent `helper` is allowed: the prompt (≤ 4 KiB) is checked before, the reply after. */
  @Post('chat/helper')
  @HttpCode(200)
  @AgentEndpoint({ agent: 'helper', input: promptOf })
  chatHelper(@Body(JsonObjectBodyPipe) body: ChatBody): { agent: string; reply: string } {
    return { agent: 'helper', reply: `helper read ${String(body.prompt ?? '').length} characters` };
  }

  /** Agent `stranger` is in no allow list: every call is denied `not_allowed`. */
  @Post('chat/stranger')
  @HttpCode(200)
  @AgentEndpoint({ agent: 'stranger', input: promptOf })
  chatStranger(): { agent: string; reply: string } {
    return { agent: 'stranger', reply: 'never sent' };
  }

  /** Tool `search`: arguments ≤ 1 KiB; `results` items of fake hits, so a large answer exceeds the content budget. */
  @Post('tools/search')
  @HttpCode(200)
  @ToolEndpoint({ tool: 'search' })
  search(@Body(JsonObjectBodyPipe) body: SearchBody): { hits: string[] } {
    const count = Math.min(Math.max(Number(body.results ?? 3) || 0, 0), 1000);
    return { hits: Array.from({ length: count }, (_, i) => `result ${i + 1} for the query`) };
  }

  /** Tool `shell` is explicitly denied. */
  @Post('tools/shell')
  @HttpCode(200)
  @ToolEndpoint({ tool: 'shell' })
  shell(): { output: string } {
    return { output: 'never sent' };
  }

  /** The policy's rules (no content). */
  @Get('policy')
  describe() {
    return this.policy.describe();
  }

  /** Verifies the hash-chained audit log (report without decision content). */
  @Get('policy/audit/verify')
  async verify(): Promise<AuditChainReport | { status: 'no_postgres_audit_log' }> {
    try {
      return await this.auditChain.verify();
    } catch (error) {
      if (RuntimePolicyError.isRuntimePolicyError(error) && error.code === 'runtime_policy_audit_log_not_configured') return { status: 'no_postgres_audit_log' };
      throw error;
    }
  }
}
