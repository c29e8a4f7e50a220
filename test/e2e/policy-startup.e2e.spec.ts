/**
 * Start-up of `RuntimePolicyModule` in a real app (spec 02 §8): policy compile errors, module option
 * validation, the bootstrap scan of `@AgentEndpoint`/`@ToolEndpoint`, compiled policies and
 * `forRootAsync`.
 */
import { Controller, Get, Inject, Injectable, Module, Post } from '@nestjs/common';
import { AgentEndpoint, ToolEndpoint } from '../../src/policy/policy-endpoint.decorator';
import { RuntimePolicy } from '../../src/policy/runtime-policy';
import { RuntimePolicyError } from '../../src/policy/runtime-policy.errors';
import { RuntimePolicyModule, type RuntimePolicyOptionsFactory } from '../../src/policy/runtime-policy.module';
import type { RuntimePolicySpec } from '../../src/policy/runtime-policy-compiler';
import { AuditSink } from '../../src/policy/audit-log/audit-sink';
import { AuditChainVerifier } from '../../src/policy/audit-log/audit-chain-verifier';
import { E2E_POLICY, RecordingSink, startupError, usePolicyApps } from './support/policy-harness';
import { DEFAULT_RESULT } from './support/policy-routes';

function expectPolicyError(error: unknown, code: string, details?: Record<string, unknown> | null): void {
  expect(RuntimePolicyError.isRuntimePolicyError(error)).toBe(true);
  expect(error).toBeInstanceOf(RuntimePolicyError);
  expect((error as RuntimePolicyError).code).toBe(code);
  if (details) expect((error as RuntimePolicyError).details).toMatchObject(details);
}

@Controller('bad')
class BothDecoratorsController {
  @Post('both')
  @AgentEndpoint({ agent: 'helper' })
  @ToolEndpoint({ tool: 'search' })
  both(): string {
    return 'never';
  }
}

@Controller('bad')
class EmptyAgentController {
  @Post('agent')
  @AgentEndpoint({ agent: '' })
  handler(): string {
    return 'never';
  }
}

@Controller('bad')
class EmptyToolController {
  @Post('tool')
  @ToolEndpoint({ tool: '' })
  handler(): string {
    return 'never';
  }
}

@Controller('bad')
class LongToolController {
  @Post('tool')
  @ToolEndpoint({ tool: 'é'.repeat(128) + 'x' })
  handler(): string {
    return 'never';
  }
}

@Controller('bad')
class LoneSurrogateAgentController {
  @Post('agent')
  @AgentEndpoint({ agent: 'agent-\ud800' })
  handler(): string {
    return 'never';
  }
}

@Controller('bad')
class NonStringAgentController {
  @Post('agent')
  @AgentEndpoint({ agent: 42 as unknown as string })
  handler(): string {
    return 'never';
  }
}

/** A valid name of exactly 256 UTF-8 bytes, and a route with no policy at all. */
@Controller('edge')
class EdgeNamesController {
  @Post('tool')
  @ToolEndpoint({ tool: 'é'.repeat(128) })
  handler(): { ok: true } {
    return { ok: true };
  }

  @Get('open')
  open(): { open: true } {
    return { open: true };
  }
}

const CONFIG = Symbol('POLICY_CONFIG');

@Injectable()
class PolicyConfig {
  readonly spec: RuntimePolicySpec = E2E_POLICY;
  readonly sink = new RecordingSink();
}

@Module({ providers: [PolicyConfig, { provide: CONFIG, useExisting: PolicyConfig }], exports: [CONFIG] })
class PolicyConfigModule {}

describe('RuntimePolicyModule start-up', () => {
  const start = usePolicyApps();

  describe('policy', () => {
    // every row has four entries: a shorter row would make Jest pass `done` as the fourth argument
    it.each<[string, unknown, string, Record<string, unknown> | null]>([
      ['not a plain object', 'allow everything', 'invalid_runtime_policy', null],
      ['an unknown key', { ...E2E_POLICY, everyone: true }, 'unsupported_runtime_policy_options', null],
      ['a bad allow selector', { agents: { allow: 'everyone' } }, 'invalid_runtime_policy_allow', { kind: 'agents' }],
      ['a bad deny selector', { tools: { deny: [''] } }, 'invalid_runtime_policy_deny', { kind: 'tools' }],
      ['an unknown rules key', { tools: { allowed: ['x'] } }, 'unsupported_runtime_policy_rules', { kind: 'tools' }],
      ['Infinity as maxArgumentBytes', { maxArgumentBytes: Infinity }, 'invalid_max_argument_bytes', null],
      ['a negative maxContentBytes', { maxContentBytes: -1 }, 'invalid_max_content_bytes', null],
      ['an empty id', { id: '' }, 'invalid_runtime_policy_id', null],
    ])('fails bootstrap when the policy spec has %s, with its compile code', async (_, policy, code, details) => {
      const error = await startupError({ moduleOptions: { policy: policy as RuntimePolicySpec } });
      expectPolicyError(error, code, details);
    });

    it('fails bootstrap without a policy', async () => {
      expectPolicyError(await startupError({ moduleOptions: { policy: undefined } }), 'invalid_runtime_policy_module_options');
    });

    it('accepts a compiled RuntimePolicy and provides it (same rules, id and fingerprint) under the RuntimePolicy token', async () => {
      const compiled = RuntimePolicy.compile({ ...E2E_POLICY, id: 'precompiled' });
      const sink = new RecordingSink();
      const t = await start({ moduleOptions: { policy: compiled, auditLog: sink } });
      const provided = t.app.get(RuntimePolicy);
      expect(RuntimePolicy.isRuntimePolicy(provided)).toBe(true);
      expect(provided.describe()).toEqual(compiled.describe());

      expect((await t.post('/p/agents/helper', {})).body).toEqual(DEFAULT_RESULT);
      const denied = await t.post('/p/agents/stranger', {});
      expect(denied.status).toBe(403);
      expect(denied.body.decision.policy_id).toBe('precompiled');
      expect(sink.decisions[0]).toMatchObject({ policy_id: 'precompiled', policy_fingerprint: compiled.fingerprint });
    });

    it('provides a spec compiled at start-up under the RuntimePolicy token', async () => {
      const t = await start();
      expect(t.app.get(RuntimePolicy).describe()).toEqual(RuntimePolicy.compile(E2E_POLICY).describe());
    });

    it('refuses a look-alike that describes itself as invalid', async () => {
      const fake = Object.create(RuntimePolicy.prototype) as RuntimePolicy;
      expect(fake.describe()).toEqual({ schema_version: 1, status: 'invalid' });
      expectPolicyError(await startupError({ moduleOptions: { policy: fake } }), 'invalid_runtime_policy_module_options');
    });
  });

  describe('module options', () => {
    it.each<[string, Record<string, unknown>]>([
      ['an unknown option', { policy: E2E_POLICY, auditLogs: 'postgres' }],
      ['auditTimeoutMs 0', { policy: E2E_POLICY, auditTimeoutMs: 0 }],
      ['auditTimeoutMs 60001', { policy: E2E_POLICY, auditTimeoutMs: 60_001 }],
      ['a fractional auditTimeoutMs', { policy: E2E_POLICY, auditTimeoutMs: 1.5 }],
      ['a string auditTimeoutMs', { policy: E2E_POLICY, auditTimeoutMs: '100' }],
      ['Infinity as auditTimeoutMs', { policy: E2E_POLICY, auditTimeoutMs: Infinity }],
      ['an unknown auditDecisions', { policy: E2E_POLICY, auditDecisions: 'allow' }],
      ['an auditLog that is not a sink', { policy: E2E_POLICY, auditLog: { write: async () => undefined } }],
      ['an unknown auditLog kind', { policy: E2E_POLICY, auditLog: 'mysql' }],
      ['an empty dataSourceName', { policy: E2E_POLICY, dataSourceName: '' }],
    ])('fails bootstrap with invalid_runtime_policy_module_options for %s', async (_, options) => {
      const error = await startupError({ policyModule: RuntimePolicyModule.forRoot(options as never) });
      const [field] = Object.keys(options).filter((key) => key !== 'policy');
      expectPolicyError(error, 'invalid_runtime_policy_module_options', { field });
    });

    it.each([1, 60_000])('accepts auditTimeoutMs %i', async (auditTimeoutMs) => {
      const t = await start({ moduleOptions: { auditTimeoutMs, auditLog: new RecordingSink() } });
      expect((await t.post('/p/agents/helper', {})).status).toBe(200);
    });
  });

  describe('endpoint scan', () => {
    it.each<[string, Function]>([
      ['@AgentEndpoint and @ToolEndpoint on one handler', BothDecoratorsController],
      ["an empty agent name ''", EmptyAgentController],
      ["an empty tool name ''", EmptyToolController],
      ['a tool name of 257 UTF-8 bytes', LongToolController],
      ['an agent name with a lone surrogate', LoneSurrogateAgentController],
      ['a non-string agent name', NonStringAgentController],
    ])('fails bootstrap with invalid_runtime_policy_module_options for %s', async (_, controller) => {
      const error = await startupError({ controllers: [controller as never] });
      expectPolicyError(error, 'invalid_runtime_policy_module_options');
      expect(typeof (error as RuntimePolicyError).details?.field).toBe('string');
    });

    it('accepts a name of exactly 256 UTF-8 bytes and leaves undecorated routes alone', async () => {
      const policy = { tools: { allow: ['é'.repeat(128)] } };
      const t = await start({ controllers: [EdgeNamesController], moduleOptions: { policy } });
      expect((await t.post('/edge/tool', {})).body).toEqual({ ok: true });
      expect((await t.get('/edge/open')).body).toEqual({ open: true });
    });
  });

  describe('forRootAsync', () => {
    it('builds the options from injected providers and enforces the policy', async () => {
      let config: PolicyConfig | undefined;
      const t = await start({
        policyModule: RuntimePolicyModule.forRootAsync({
          imports: [PolicyConfigModule],
          inject: [CONFIG],
          useFactory: async (injected: PolicyConfig) => {
            config = injected;
            await new Promise((resolve) => setTimeout(resolve, 5));
            return { policy: injected.spec, auditLog: injected.sink, auditDecisions: 'all' };
          },
        }),
      });
      expect(config).toBeInstanceOf(PolicyConfig);
      expect(t.app.get(AuditSink)).toBe(config!.sink);
      expect((await t.post('/p/agents/helper', { prompt: 'hi' })).body).toEqual(DEFAULT_RESULT);
      const denied = await t.post('/p/tools/shell', {});
      expect(denied.status).toBe(403);
      expect(config!.sink.decisions.map((d) => d.outcome)).toEqual(['allow', 'allow', 'deny']);
      expect(denied.body.decision.decision_id).toBe(config!.sink.decisions[2].decision_id);
    });

    it('fails bootstrap when the factory returns bad options or a policy that does not compile', async () => {
      const badOptions = await startupError({
        policyModule: RuntimePolicyModule.forRootAsync({ useFactory: () => ({ policy: E2E_POLICY, auditTimeoutMs: 0 }) }),
      });
      expectPolicyError(badOptions, 'invalid_runtime_policy_module_options');
      const badPolicy = await startupError({
        policyModule: RuntimePolicyModule.forRootAsync({ useFactory: async () => ({ policy: { agents: { allow: 'everyone' } } as never }) }),
      });
      expectPolicyError(badPolicy, 'invalid_runtime_policy_allow', { kind: 'agents' });
    });

    it.each([
      ['useClass', (factory: new () => RuntimePolicyOptionsFactory) => RuntimePolicyModule.forRootAsync({ useClass: factory })],
      [
        'useExisting',
        (factory: new () => RuntimePolicyOptionsFactory) => {
          @Module({ providers: [factory], exports: [factory] })
          class FactoryModule {}
          return RuntimePolicyModule.forRootAsync({ imports: [FactoryModule], useExisting: factory });
        },
      ],
    ])('builds the options with %s (createRuntimePolicyOptions) and validates them like forRoot', async (_variant, declare) => {
      const sink = new RecordingSink();
      @Injectable()
      class PolicyOptions implements RuntimePolicyOptionsFactory {
        async createRuntimePolicyOptions() {
          return { policy: E2E_POLICY, auditLog: sink, auditDecisions: 'all' as const };
        }
      }
      const t = await start({ policyModule: declare(PolicyOptions) });
      expect(t.app.get(AuditSink)).toBe(sink);
      expect((await t.post('/p/tools/shell', {})).status).toBe(403);
      expect(sink.decisions.map((d) => d.outcome)).toEqual(['deny']);

      @Injectable()
      class BadOptions implements RuntimePolicyOptionsFactory {
        createRuntimePolicyOptions() {
          return { policy: E2E_POLICY, auditTimeoutMs: 0 };
        }
      }
      expectPolicyError(await startupError({ policyModule: declare(BadOptions) }), 'invalid_runtime_policy_module_options', { field: 'auditTimeoutMs' });
    });

    it.each<[string, () => unknown, Record<string, unknown>]>([
      ['no factory', () => RuntimePolicyModule.forRootAsync({}), { field: 'forRootAsync' }],
      ['two factories', () => RuntimePolicyModule.forRootAsync({ useFactory: () => ({ policy: E2E_POLICY }), useClass: class {} as never }), { fields: ['useClass', 'useFactory'] }],
      ['a factory that is not a function', () => RuntimePolicyModule.forRootAsync({ useFactory: 'policy' as never }), { field: 'useFactory' }],
    ])('refuses a forRootAsync with %s when it is declared', (_name, declare, details) => {
      let caught: unknown;
      try {
        declare();
      } catch (error) {
        caught = error;
      }
      expectPolicyError(caught, 'invalid_runtime_policy_module_options', details);
    });
  });

  it('registers a global module: a provider in another module can inject the policy and the sink', async () => {
    @Injectable()
    class Consumer {
      constructor(
        @Inject(RuntimePolicy) readonly policy: RuntimePolicy,
        @Inject(AuditSink) readonly sink: AuditSink,
      ) {}
    }
    @Module({ providers: [Consumer], exports: [Consumer] })
    class ConsumerModule {}

    const sink = new RecordingSink();
    const t = await start({ imports: [ConsumerModule], moduleOptions: { auditLog: sink } });
    const consumer = t.app.get(Consumer);
    expect(consumer.sink).toBe(sink);
    expect(consumer.policy.id).toBe('e2e-policy');
  });

  it.each([
    ['a sink of its own', () => ({ auditLog: new RecordingSink() })],
    ['no sink', () => ({})],
  ])("provides an AuditChainVerifier that answers runtime_policy_audit_log_not_configured with %s (no 'postgres' log)", async (_what, options) => {
    const t = await start({ moduleOptions: options() });
    const error = await t.app
      .get<AuditChainVerifier>(AuditChainVerifier)
      .verify()
      .catch((e: unknown) => e);
    expectPolicyError(error, 'runtime_policy_audit_log_not_configured');
  });
});
