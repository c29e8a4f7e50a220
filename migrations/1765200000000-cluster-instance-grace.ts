import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The grace of each cluster instance's lock (issue 23, item 4): `reap_after_ms` is how long the
 * instance may keep its permits after it last confirmed its lock (its lock grace plus the safety
 * margin), written by the instance itself; `dead_since` is when a peer first saw it dead (database
 * time), cleared by the instance when it retakes its lock. Peers reap a dead instance's admission
 * rows only once `dead_since + reap_after_ms` has passed. It creates no table, so it may run again
 * after its row in the migrations table is gone (`IF NOT EXISTS`).
 */
export class ClusterInstanceGrace1765200000000 implements MigrationInterface {
  name = 'ClusterInstanceGrace1765200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'ALTER TABLE agent_runtime_cluster_instances ADD COLUMN IF NOT EXISTS reap_after_ms integer NOT NULL DEFAULT 3000, ADD COLUMN IF NOT EXISTS dead_since timestamptz',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE agent_runtime_cluster_instances DROP COLUMN IF EXISTS dead_since, DROP COLUMN IF EXISTS reap_after_ms');
  }
}
