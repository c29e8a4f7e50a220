import type { InjectionToken, Provider } from '@nestjs/common';
import type { ModuleRef } from '@nestjs/core';
import type { DataSource } from 'typeorm';
import { conflictingDataSourceFields, type AppDataSourceOptions } from './app-data-source';

/** How a module injects the app's DataSource: the token to inject, and the providers that make it exist. */
export interface DataSourceInjection {
  readonly token: InjectionToken;
  readonly providers: Provider[];
}

/**
 * The injection of the DataSource a module was given: `dataSource` becomes a value provider under the
 * module's own `moduleToken`; otherwise the module injects `@nestjs/typeorm`'s token for
 * `dataSourceName` (the DataSource the app registered with `TypeOrmModule`, never a copy). Both
 * given: throws `refuse(fields)`, the module's own options error.
 */
export function dataSourceInjection(
  choice: { readonly dataSource?: unknown; readonly dataSourceName?: unknown },
  moduleToken: symbol,
  refuse: (fields: readonly string[]) => Error,
): DataSourceInjection {
  const conflict = conflictingDataSourceFields(choice);
  if (conflict.length > 0) throw refuse(conflict);
  if (choice.dataSource !== undefined) return { token: moduleToken, providers: [{ provide: moduleToken, useValue: choice.dataSource }] };
  return { token: typeOrmDataSourceToken(choice.dataSourceName as string | undefined), providers: [] };
}

/** The DataSource a module was given, looked up once every provider exists (for a module that finds it late). */
export function resolveAppDataSource(moduleRef: ModuleRef, choice: AppDataSourceOptions): DataSource {
  return choice.dataSource ?? moduleRef.get<DataSource>(typeOrmDataSourceToken(choice.dataSourceName), { strict: false });
}

function typeOrmDataSourceToken(name: string | undefined): InjectionToken {
  // @nestjs/typeorm is an optional peer, needed only when the app does not pass its DataSource
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { getDataSourceToken } = require('@nestjs/typeorm') as typeof import('@nestjs/typeorm');
  return getDataSourceToken(name) as InjectionToken;
}
