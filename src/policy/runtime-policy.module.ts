import { DynamicModule, Global, Logger, Module, type Provider } from '@nestjs/common';
import { DiscoveryModule, ModuleRef } from '@nestjs/core';
import { StartupSchemaCheck } from '../database/schema/startup-schema-check';
import { StartupSchemaCheckModule } from '../database/startup-schema-check.module';
import { moduleBuilder, type ModuleAsyncOptions } from '../shared/nest/module.builder';
import { asTelemetrySink, optionalEventEmitter } from '../telemetry/event-emitter.provider';
import { AuditChainVerifier, auditChainVerifierOf } from './audit-log/audit-chain-verifier';
import { AuditRecorder } from './audit-log/audit-recorder';
import { AuditSink } from './audit-log/audit-sink';
import { DeferredPostgresAuditLog } from './audit-log/deferred-postgres-audit-log.service';
import { PolicyEndpointScanner } from './policy-endpoint-scanner.service';
import { RuntimePolicy } from './runtime-policy';
import { resolveRuntimePolicyModuleOptions, type ResolvedRuntimePolicyModuleOptions } from './runtime-policy-module-options';
import { RUNTIME_POLICY_OPTIONS, type RuntimePolicyModuleOptions } from './runtime-policy.constants';
import { RuntimePolicyError } from './runtime-policy.errors';
import { RuntimePolicyInterceptor } from './runtime-policy.interceptor';

/** A class that builds the module options (`useClass` / `useExisting`). */
export interface RuntimePolicyOptionsFactory {
  createRuntimePolicyOptions(): RuntimePolicyModuleOptions | Promise<RuntimePolicyModuleOptions>;
}

/** Options of `RuntimePolicyModule.forRootAsync`: `imports`, `inject`, exactly one of `useFactory`, `useClass`, `useExisting`. */
export type RuntimePolicyModuleAsyncOptions = ModuleAsyncOptions<RuntimePolicyModuleOptions, RuntimePolicyOptionsFactory>;

const logger = new Logger('RuntimePolicyModule');

const providers: Provider[] = [
  {
    provide: RuntimePolicy,
    inject: [RUNTIME_POLICY_OPTIONS, ...optionalEventEmitter()],
    useFactory: (options: ResolvedRuntimePolicyModuleOptions, events?: unknown) => options.policy.withDeps({ events: asTelemetrySink(events) }),
  },
  {
    provide: AuditSink,
    inject: [RUNTIME_POLICY_OPTIONS, ModuleRef, StartupSchemaCheck],
    useFactory: (options: ResolvedRuntimePolicyModuleOptions, moduleRef: ModuleRef, schemaCheck: StartupSchemaCheck) => {
      if (options.auditLog === 'postgres') return new DeferredPostgresAuditLog(moduleRef, options, schemaCheck);
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
  { provide: AuditChainVerifier, inject: [AuditSink], useFactory: auditChainVerifierOf },
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
    return runtimePolicyModule.forRoot(options);
  }

  static forRootAsync(options: RuntimePolicyModuleAsyncOptions): DynamicModule {
    return runtimePolicyModule.forRootAsync(options);
  }
}

const runtimePolicyModule = moduleBuilder<RuntimePolicyModuleOptions, RuntimePolicyOptionsFactory>({
  module: RuntimePolicyModule,
  optionsToken: RUNTIME_POLICY_OPTIONS,
  factoryMethod: 'createRuntimePolicyOptions',
  resolve: resolveRuntimePolicyModuleOptions,
  invalid: (details) => new RuntimePolicyError('invalid_runtime_policy_module_options', details),
  metadata: () => ({
    imports: [DiscoveryModule, StartupSchemaCheckModule],
    providers,
    exports: [RuntimePolicy, AuditSink, AuditChainVerifier, RUNTIME_POLICY_OPTIONS, AuditRecorder, RuntimePolicyInterceptor],
  }),
});
