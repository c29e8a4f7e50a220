import { DynamicModule, Global, Inject, Module, type InjectionToken, type OnModuleInit, type Provider } from '@nestjs/common';
import { APP_DATA_SOURCE_RULES, type AppDataSourceKey, type AppDataSourceOptions } from '../database/app-data-source';
import { dataSourceInjection } from '../database/app-data-source.provider';
import { StartupSchemaCheck } from '../database/schema/startup-schema-check';
import { StartupSchemaCheckModule } from '../database/startup-schema-check.module';
import { AgentRuntimeHealthModule } from '../health/agent-runtime-health.module';
import { ShutdownCoordinator } from '../health/shutdown-coordinator';
import { moduleBuilder, type ModuleAsyncOptions } from '../shared/nest/module.builder';
import { optionFailureDetails } from '../shared/options/option-reader';
import { asTelemetrySink, optionalEventEmitter } from '../telemetry/event-emitter.provider';
import { InvocationLedger } from './invocation-ledger';
import { resolveLedgerOptions, type InvocationLedgerOptions } from './ledger-options';
import { ledgerSchemaTarget } from './storage/ledger-startup';
import { LEDGER_MODULE_OPTIONS } from './ledger.constants';
import { LedgerError } from './ledger.errors';
import { LedgerHealthIndicator } from './ledger.health';

/** Options of `LedgerModule.forRoot` (spec 04 §8). Unknown keys fail start-up with `invalid_ledger_options`. */
export interface LedgerModuleOptions extends InvocationLedgerOptions, AppDataSourceOptions {}

/** A class that builds the ledger options (`useClass` / `useExisting`). */
export interface LedgerOptionsFactory {
  createLedgerOptions(): LedgerModuleOptions | Promise<LedgerModuleOptions>;
}

/** Options of `LedgerModule.forRootAsync`: `imports`, `inject`, exactly one of `useFactory`, `useClass`, `useExisting`. */
/**
 * Options of `LedgerModule.forRootAsync`. The DataSource (`dataSource` or `dataSourceName`) decides an
 * injection token, which must be known when the module is declared (as with
 * `TypeOrmModule.forRootAsync({ name })`), so it is given here; the factory may repeat it but not change it.
 */
export interface LedgerModuleAsyncOptions extends ModuleAsyncOptions<LedgerModuleOptions, LedgerOptionsFactory>, AppDataSourceOptions {}

const LEDGER_DATA_SOURCE = Symbol('LedgerModule.dataSource');
const refuse = (fields: readonly string[]) => new LedgerError('invalid_ledger_options', optionFailureDetails(fields));

/**
 * Global module providing the started `InvocationLedger` on a TypeORM DataSource, and
 * `LedgerHealthIndicator`. `onModuleInit` validates the options, validates the ledger table (a
 * wrong schema fails start-up with `schema_mismatch` listing every difference) and takes the
 * instance lock; Nest does not finish booting when any of it fails. On application shutdown the
 * ledger closes in the coordinator's `ledger` step, after admission has drained and before the
 * DataSource closes, whatever the import order: it refuses new operations, waits up to 5 s for
 * those in flight and releases its instance lock.
 */
@Global()
@Module({})
export class LedgerModule implements OnModuleInit {
  constructor(
    @Inject(InvocationLedger) private readonly ledger: InvocationLedger,
    @Inject(ShutdownCoordinator) coordinator: ShutdownCoordinator,
    @Inject(StartupSchemaCheck) private readonly schemaCheck: StartupSchemaCheck,
  ) {
    coordinator.register({
      component: 'invocation_ledger',
      phase: 'ledger',
      run: () => ledger.close(),
      counts: () => ({ lock_held: ledger.lockHeld }),
    });
  }

  static forRoot(options: LedgerModuleOptions = {}): DynamicModule {
    return ledgerModule.forRoot(options);
  }

  static forRootAsync(options: LedgerModuleAsyncOptions): DynamicModule {
    return ledgerModule.forRootAsync(options);
  }

  async onModuleInit(): Promise<void> {
    await this.schemaCheck.assertAll();
    await this.ledger.start();
  }
}

function ledgerProvider(dataSourceToken: InjectionToken): Provider {
  return {
    provide: InvocationLedger,
    inject: [LEDGER_MODULE_OPTIONS, dataSourceToken, StartupSchemaCheck, ...optionalEventEmitter()],
    // the ledger validates its options (resolveLedgerOptions) and refuses bad ones when it starts
    useFactory: (options: InvocationLedgerOptions, dataSource: never, schemaCheck: StartupSchemaCheck, events?: unknown) => {
      schemaCheck.register('ledger', () => ledgerSchemaTarget(dataSource, resolveLedgerOptions(options)));
      return new InvocationLedger(dataSource, options, { events: asTelemetrySink(events) });
    },
  };
}

const ledgerModule = moduleBuilder<LedgerModuleOptions, LedgerOptionsFactory, AppDataSourceKey>({
  module: LedgerModule,
  optionsToken: LEDGER_MODULE_OPTIONS,
  factoryMethod: 'createLedgerOptions',
  declared: APP_DATA_SOURCE_RULES,
  invalid: (details) => new LedgerError('invalid_ledger_options', details),
  metadata: (declared) => {
    const dataSource = dataSourceInjection(declared, LEDGER_DATA_SOURCE, refuse);
    return {
      imports: [AgentRuntimeHealthModule, StartupSchemaCheckModule],
      providers: [...dataSource.providers, ledgerProvider(dataSource.token), LedgerHealthIndicator],
      exports: [InvocationLedger, LEDGER_MODULE_OPTIONS, LedgerHealthIndicator],
    };
  },
});
