import { DynamicModule, Global, Logger, Module, type FactoryProvider, type ModuleMetadata, type Provider } from '@nestjs/common';
import { DiscoveryModule, ModuleRef } from '@nestjs/core';
import { asTelemetrySink, optionalEventEmitter } from '../telemetry/event-emitter-injection';
import { AuditRecorder } from './audit-recorder';
import { AuditSink } from './audit-sink';
import { DeferredPostgresAuditLog } from './deferred-postgres-audit-log';
import { PolicyEndpointScanner } from './policy-endpoint.scanner';
import { RuntimePolicy } from './runtime-policy';
import { resolveRuntimePolicyModuleOptions, type ResolvedRuntimePolicyModuleOptions } from './runtime-policy-module-options';
import { RUNTIME_POLICY_OPTIONS, type RuntimePolicyModuleOptions } from './runtime-policy.constants';
import { RuntimePolicyInterceptor } from './runtime-policy.interceptor';

/** Options of `RuntimePolicyModule.forRootAsync`. */
export interface RuntimePolicyModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  inject?: FactoryProvider['inject'];
  useFactory: (...args: any[]) => RuntimePolicyModuleOptions | Promise<RuntimePolicyModuleOptions>;
}

const logger = new Logger('RuntimePolicyModule');

const providers: Provider[] = [
  {
    provide: RuntimePolicy,
    inject: [RUNTIME_POLICY_OPTIONS, ...optionalEventEmitter()],
    useFactory: (options: ResolvedRuntimePolicyModuleOptions, events?: unknown) => options.policy.withDeps({ events: asTelemetrySink(events) }),
  },
  {
    provide: AuditSink,
    inject: [RUNTIME_POLICY_OPTIONS, ModuleRef],
    useFactory: (options: ResolvedRuntimePolicyModuleOptions, moduleRef: ModuleRef) => {
      if (options.auditLog === 'postgres') return new DeferredPostgresAuditLog(moduleRef, options.dataSourceName);
      if (options.auditLog) return options.auditLog;
      logger.warn('no auditLog configured: policy decisions are not persisted');
      return null;
    },
  },
  {
    provide: AuditRecorder,
    inject: [RUNTIME_POLICY_OPTIONS, AuditSink],
    useFactory: (options: ResolvedRuntimePolicyModuleOptions, sink: AuditSink | null) => new AuditRecorder(sink, options.auditDecisions, options.auditTimeoutMs),
  },
  RuntimePolicyInterceptor,
  PolicyEndpointScanner,
];

/**
 * Global module providing the compiled `RuntimePolicy` (bound to `EventEmitter2` when present), the
 * `AuditSink` and the interceptor behind `@AgentEndpoint()`/`@ToolEndpoint()` (spec 02 §8). Bad
 * options or a policy that does not compile stop bootstrap.
 */
@Global()
@Module({})
export class RuntimePolicyModule {
  static forRoot(options: RuntimePolicyModuleOptions): DynamicModule {
    return RuntimePolicyModule.build({ provide: RUNTIME_POLICY_OPTIONS, useFactory: () => resolveRuntimePolicyModuleOptions(options) });
  }

  static forRootAsync(options: RuntimePolicyModuleAsyncOptions): DynamicModule {
    return RuntimePolicyModule.build(
      {
        provide: RUNTIME_POLICY_OPTIONS,
        inject: options.inject ?? [],
        useFactory: async (...args: unknown[]) => resolveRuntimePolicyModuleOptions(await options.useFactory(...args)),
      },
      options.imports,
    );
  }

  private static build(optionsProvider: Provider, imports: ModuleMetadata['imports'] = []): DynamicModule {
    return {
      module: RuntimePolicyModule,
      global: true,
      imports: [DiscoveryModule, ...imports],
      providers: [optionsProvider, ...providers],
      exports: [RuntimePolicy, AuditSink, RUNTIME_POLICY_OPTIONS, AuditRecorder, RuntimePolicyInterceptor],
    };
  }
}
