import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The principal that owns each run of the Postgres run store (`agent_runtime_runs`): the id of whoever
 * started it through the `/runs` routes. Runs stored before this migration have none (`NULL`): only the
 * app's `authorizeRun` grants access to them. It creates no table, so it may run again after its
 * row in the migrations table is gone (`IF NOT EXISTS`).
 */
export class RunOwnerPrincipal1765100000000 implements MigrationInterface {
  name = 'RunOwnerPrincipal1765100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE agent_runtime_runs ADD COLUMN IF NOT EXISTS owner_principal text COLLATE "C"');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE agent_runtime_runs DROP COLUMN IF EXISTS owner_principal');
  }
}
