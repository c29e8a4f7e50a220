import {
  DynamicModule,
  Global,
  Inject,
  Module,
  type FactoryProvider,
  type ModuleMetadata,
  type OnApplicationShutdown,
  type OnModuleInit,
  type Provider,
} from '@nestjs/common';
import { asTelemetrySink, optionalEventEmitter } from '../telemetry/event-emitter-injection';
import { InvocationLedger } from './invocation-ledger';
import type { InvocationLedgerOptions } from './ledger-options';
import { LEDGER_MODULE_OPTIONS } from './ledger.constants';
import { LedgerError } from './ledger.errors';

/** Options of `LedgerModule.forRoot` (spec 04 §8). Unknown keys fail start-up with `invalid_ledger_options`. */
export interface LedgerModuleOptions extends InvocationLedgerOptions {
  /** Name of the `@nestjs/typeorm` DataSource to use. @default the default DataSource */
  dataSourceName?: string;
}

/** Options of `LedgerModule.forRootAsync`. */
export interface LedgerModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  /**
   * Name of the `@nestjs/typeorm` DataSource. Its injection token must be known when the module is
   * declared (as with `TypeOrmModule.forRootAsync({ name })`), so it is given here; the factory may
   * repeat it but not change it. @default the default DataSource
   */
  dataSourceName?: string;
  inject?: FactoryProvider['inject'];
  useFactory: (...args: any[]) => LedgerModuleOptions | Promise<LedgerModuleOptions>;
}

/**
 * Global module providing the started `InvocationLedger` on a TypeORM DataSource. `onModuleInit`
 * validates the options, validates the ledger table (a wrong schema fails start-up with
 * `schema_mismatch` listing every difference) and takes the instance lock; Nest does not finish
 * booting when any of it fails. On application shutdown (hooks enabled by the app) the ledger
 * refuses new operations, waits up to 5 s for those in flight and releases its instance lock.
 * `LedgerHealthIndicator` is not registered here: list it beside `TerminusModule`.
 */
@Global()
@Module({})
export class LedgerModule implements OnModuleInit, OnApplicationShutdown {
  constructor(@Inject(InvocationLedger) private readonly ledger: InvocationLedger) {}

  static forRoot(options: LedgerModuleOptions = {}): DynamicModule {
    const dataSourceName = staticDataSourceName(options);
    return LedgerModule.build({ provide: LEDGER_MODULE_OPTIONS, useValue: options }, dataSourceName);
  }

  static forRootAsync(options: LedgerModuleAsyncOptions): DynamicModule {
    const dataSourceName = typeof options?.dataSourceName === 'string' ? options.dataSourceName : undefined;
    const optionsProvider: Provider = {
      provide: LEDGER_MODULE_OPTIONS,
      inject: options?.inject ?? [],
      useFactory: async (...args: unknown[]) => {
        if (typeof options?.useFactory !== 'function') throw invalidOption('useFactory');
        const resolved = await options.useFactory(...args);
        if (hasOwn(resolved, 'dataSourceName') && staticDataSourceName(resolved) !== dataSourceName) throw invalidOption('dataSourceName');
        return resolved;
      },
    };
    return LedgerModule.build(optionsProvider, dataSourceName, options?.imports);
  }

  async onModuleInit(): Promise<void> {
    await this.ledger.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.ledger.close();
  }

  private static build(optionsProvider: Provider, dataSourceName: string | undefined, imports: ModuleMetadata['imports'] = []): DynamicModule {
    // @nestjs/typeorm is an optional peer, needed only when this module is used
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { getDataSourceToken } = require('@nestjs/typeorm') as typeof import('@nestjs/typeorm');
    const ledgerProvider: Provider = {
      provide: InvocationLedger,
      inject: [LEDGER_MODULE_OPTIONS, getDataSourceToken(dataSourceName), ...optionalEventEmitter()],
      useFactory: (options: unknown, dataSource: never, events?: unknown) =>
        new InvocationLedger(dataSource, withoutDataSourceName(options) as InvocationLedgerOptions, { events: asTelemetrySink(events) }),
    };
    return {
      module: LedgerModule,
      global: true,
      imports,
      providers: [optionsProvider, ledgerProvider],
      exports: [InvocationLedger, LEDGER_MODULE_OPTIONS],
    };
  }
}

/** `dataSourceName` when it is a usable name (own data, non-empty string), else `undefined`. */
function staticDataSourceName(options: unknown): string | undefined {
  try {
    const descriptor = isObject(options) ? Object.getOwnPropertyDescriptor(options, 'dataSourceName') : undefined;
    const value: unknown = descriptor && 'value' in descriptor ? descriptor.value : undefined;
    return typeof value === 'string' && value.length > 0 ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The ledger's own options: the module options without a valid `dataSourceName`. Everything else,
 * valid or not, is handed on, and the ledger refuses what is wrong when it starts in `onModuleInit`.
 */
function withoutDataSourceName(options: unknown): unknown {
  if (!hasOwn(options, 'dataSourceName')) return options;
  if (staticDataSourceName(options) === undefined) throw invalidOption('dataSourceName');
  const { dataSourceName: _name, ...rest } = options as LedgerModuleOptions;
  return rest;
}

function invalidOption(option: string): LedgerError {
  return new LedgerError('invalid_ledger_options', { option, options: [option] });
}

function hasOwn(value: unknown, key: string): boolean {
  try {
    return isObject(value) && Object.getOwnPropertyDescriptor(value, key) !== undefined;
  } catch {
    return false;
  }
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}
