import type { DataSource } from 'typeorm';

/**
 * Where a Postgres-backed module finds the app's TypeORM DataSource: the DataSource itself
 * (`dataSource`), or the name of one registered by `@nestjs/typeorm` (`dataSourceName`; the
 * default DataSource when neither is given). Giving both is refused.
 */
export interface AppDataSourceOptions {
  /** The app's DataSource, for an app that does not use `@nestjs/typeorm`. @default the `@nestjs/typeorm` DataSource */
  readonly dataSource?: DataSource;
  /** Name of the `@nestjs/typeorm` DataSource to use. @default the default DataSource */
  readonly dataSourceName?: string;
}

const DATA_SOURCE_METHODS = ['query', 'createQueryRunner', 'initialize', 'destroy'] as const;

/**
 * Option rule of `dataSource`: an object with a DataSource's methods. Checked by shape, not
 * `instanceof`, so a DataSource of the app's typeorm is accepted whichever copy this file sees.
 */
export const isDataSource = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && DATA_SOURCE_METHODS.every((method) => typeof (value as Record<string, unknown>)[method] === 'function');

/** The option fields that conflict (`['dataSource', 'dataSourceName']` when both are given), else `[]`. */
export function conflictingDataSourceFields(options: { readonly dataSource?: unknown; readonly dataSourceName?: unknown }): string[] {
  return options.dataSource !== undefined && options.dataSourceName !== undefined ? ['dataSource', 'dataSourceName'] : [];
}

/** The two options of {@link AppDataSourceOptions}, as the module builder declares them. */
export type AppDataSourceKey = keyof AppDataSourceOptions;

/** The rules of {@link AppDataSourceOptions}, for a module's declared options. */
export const APP_DATA_SOURCE_RULES: Readonly<Record<AppDataSourceKey, (value: unknown) => boolean>> = Object.freeze({
  dataSource: isDataSource,
  dataSourceName: (value: unknown) => typeof value === 'string' && value.length > 0,
});
