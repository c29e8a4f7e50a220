import { Global, Module } from '@nestjs/common';
import { StartupSchemaCheck } from './schema/startup-schema-check';

/**
 * Global module holding the app's one {@link StartupSchemaCheck}: every Postgres-backed module of
 * the package imports it, registers its tables while its providers are built and awaits the one
 * check in its `onModuleInit`, so a start-up fails once with one report of every mismatch.
 */
@Global()
@Module({ providers: [StartupSchemaCheck], exports: [StartupSchemaCheck] })
export class StartupSchemaCheckModule {}
