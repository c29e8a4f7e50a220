import type { MigrationInterface, QueryRunner } from 'typeorm';
import { evalStoreDdl, evalStoreTablesToDrop } from '../../../migrations/1764800000000-evaluation-store';
import { DEFAULT_EVAL_TABLE_PREFIX, isEvalTablePrefix } from './eval-store.schema';

/** Timestamp of the package's evaluation store migration; a custom prefix's migration carries it too by default. */
export const EVAL_STORE_MIGRATION_TIMESTAMP = 1764800000000;

/**
 * The TypeORM migrations creating the evaluation store's five tables under `prefix` (spec 05 §2.1),
 * for the `tablePrefix` option. Register them on the DataSource beside the package's migrations;
 * the one class is named `EvaluationStore_<prefix><timestamp>`, so each prefix has its own row in
 * the migrations table. Throws a `TypeError` for a prefix breaking `^[a-z_][a-z0-9_]{0,40}$`, for the
 * default prefix (created by `EvaluationStore1764800000000`) and for a timestamp that is not 13 digits.
 *
 * @example
 * new DataSource({ ...options, migrations: [...agentRuntimeMigrations(), ...createEvalStoreMigrations('billing_eval_')] });
 */
export function createEvalStoreMigrations(prefix: string, timestamp: number = EVAL_STORE_MIGRATION_TIMESTAMP): Array<new () => MigrationInterface> {
  if (!isEvalTablePrefix(prefix)) throw new TypeError('prefix must match ^[a-z_][a-z0-9_]{0,40}$');
  if (prefix === DEFAULT_EVAL_TABLE_PREFIX) throw new TypeError('the default prefix is created by the package migration EvaluationStore1764800000000');
  // TypeORM reads the timestamp from the last 13 characters of the migration name
  if (!Number.isSafeInteger(timestamp) || String(timestamp).length !== 13) throw new TypeError('timestamp must be 13-digit epoch milliseconds');
  const name = `EvaluationStore_${prefix}${timestamp}`;
  return [
    class CustomEvaluationStoreMigration implements MigrationInterface {
      name = name;

      async up(queryRunner: QueryRunner): Promise<void> {
        for (const statement of evalStoreDdl(prefix)) await queryRunner.query(statement);
      }

      async down(queryRunner: QueryRunner): Promise<void> {
        for (const table of evalStoreTablesToDrop(prefix)) await queryRunner.query(`DROP TABLE ${table}`);
      }
    },
  ];
}
