import type { DataSource } from 'typeorm';
import { SchemaValidatorError } from '../schema-validator.errors';
import { asStartupReport } from '../failure-report';
import type { SchemaMismatch } from './schema-comparison';
import { validateSchema, type SchemaValidationOptions } from './schema-validator';
import type { TableSpec } from './table-spec';

/** What one module validates at start: its tables on its DataSource, with the validator's options. */
export interface SchemaCheckTarget {
  readonly dataSource: DataSource;
  readonly specs: readonly TableSpec[];
  readonly options?: SchemaValidationOptions;
}

/** A mismatch of the start-up report: the module that declared the table, then the validator's fields. */
export type ModuleSchemaMismatch = SchemaMismatch & { readonly module: string };

/**
 * Builds a module's target when the check runs (every provider exists by then); `null` when the
 * module has nothing to validate (for example a profile without tables).
 */
export type SchemaCheckTargetSource = () => SchemaCheckTarget | null | Promise<SchemaCheckTarget | null>;

/**
 * One schema check for a whole application start-up (one instance per Nest app). Each module
 * registers its tables while its providers are built; the first module start that needs the schema
 * calls {@link assertAll}, which validates every registered module once and rejects with ONE
 * `SchemaValidatorError` `schema_mismatch` listing every mismatch as `{module, table, property,
 * expected, actual}` (a mismatch several modules share, such as a server setting or a pending
 * migration, is listed once, under the first module). Its `stack` is the report itself, so an
 * uncaught rejection prints the mismatches and no frame.
 *
 * A module whose target cannot be built (bad options) or whose catalog cannot be read is left out:
 * its own start-up then fails with its own code, as without this check. A call while providers are
 * still being built (a provider factory that starts a module early) checks the modules registered
 * so far; a later call checks only the modules registered since.
 *
 * @example
 * checks.register('ledger', () => ({ dataSource, specs: [ledgerTableSpec('agent_runtime_invocations')] }));
 * await checks.assertAll(); // in onModuleInit, before the module's own start
 */
export class StartupSchemaCheck {
  readonly #targets: { readonly module: string; readonly source: SchemaCheckTargetSource }[] = [];
  /** The checks so far, chained; a failed one stays failed. */
  #result: Promise<void> = Promise.resolve();
  /** How many registrations a check has taken. */
  #checked = 0;

  /** Adds a module's tables. */
  register(module: string, source: SchemaCheckTargetSource): void {
    this.#targets.push({ module, source });
  }

  /** Validates every module registered and not yet checked, once; rejects with the one report when anything differs. */
  assertAll(): Promise<void> {
    this.#result = this.#result.then(async () => {
      // a turn of the event loop: registrations of providers Nest is still building land first
      await new Promise((resolve) => setImmediate(resolve));
      const batch = this.#targets.slice(this.#checked);
      this.#checked = this.#targets.length;
      if (batch.length > 0) await checkBatch(batch);
    });
    return this.#result;
  }
}

async function checkBatch(batch: readonly { readonly module: string; readonly source: SchemaCheckTargetSource }[]): Promise<void> {
  const found = await Promise.all(batch.map(({ module, source }) => mismatchesOf(module, source)));
  const mismatches = distinct(found.flat());
  if (mismatches.length > 0) throw asStartupReport(new SchemaValidatorError('schema_mismatch', { mismatches }));
}

async function mismatchesOf(module: string, source: SchemaCheckTargetSource): Promise<ModuleSchemaMismatch[]> {
  try {
    const target = await source();
    if (target === null) return [];
    const report = await validateSchema(target.dataSource, target.specs, target.options ?? {});
    return report.mismatches.map((mismatch) => Object.freeze({ module, ...mismatch }));
  } catch {
    // the module's own start reports this failure under its own code
    return [];
  }
}

function distinct(mismatches: readonly ModuleSchemaMismatch[]): ModuleSchemaMismatch[] {
  const seen = new Set<string>();
  return mismatches.filter(({ table, property, expected, actual }) => {
    const key = JSON.stringify([table, property, expected, actual]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
