import type { MigrationInterface, QueryRunner } from 'typeorm';
import { invocationLedgerDdl } from '../../../migrations/1764500000000-invocation-ledger';
import { DEFAULT_LEDGER_TABLE, isLedgerTableName } from './ledger.schema';

/** Timestamp of the package's ledger migration; a custom table's migration carries it too by default. */
export const LEDGER_MIGRATION_TIMESTAMP = 1764500000000;

/**
 * A TypeORM migration class creating a ledger table named `tableName` (spec 04 §2), for the
 * `tableName` option. Register it on the DataSource beside the package's migrations; its name is
 * `InvocationLedger_<tableName><timestamp>`, so each table has its own row in the migrations table.
 *
 * @example
 * new DataSource({ ...options, migrations: [...agentRuntimeMigrations(), createLedgerMigration('billing_invocations')] });
 */
export function createLedgerMigration(tableName: string, timestamp: number = LEDGER_MIGRATION_TIMESTAMP): new () => MigrationInterface {
  if (!isLedgerTableName(tableName)) throw new TypeError('tableName must match ^[a-z_][a-z0-9_]{0,43}$');
  if (tableName === DEFAULT_LEDGER_TABLE) throw new TypeError('the default table is created by the package migration InvocationLedger1764500000000');
  // TypeORM reads the timestamp from the last 13 characters of the migration name
  if (!Number.isSafeInteger(timestamp) || String(timestamp).length !== 13) throw new TypeError('timestamp must be 13-digit epoch milliseconds');
  const name = `InvocationLedger_${tableName}${timestamp}`;
  return class CustomInvocationLedgerMigration implements MigrationInterface {
    name = name;

    async up(queryRunner: QueryRunner): Promise<void> {
      for (const statement of invocationLedgerDdl(tableName)) await queryRunner.query(statement);
    }

    async down(queryRunner: QueryRunner): Promise<void> {
      await queryRunner.query(`DROP TABLE ${tableName}`);
    }
  };
}
