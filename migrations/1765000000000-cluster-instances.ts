import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The instances of a cluster (spec 08 §2): one row per instance id that joined. Liveness is not
 * stored here: an instance is live while it holds its instance advisory lock, and the row of a
 * dead one is removed by the next reap.
 */
export function clusterInstancesDdl(): string[] {
  return [
    `CREATE TABLE agent_runtime_cluster_instances (
      instance_id text COLLATE "C" NOT NULL,
      joined_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      CONSTRAINT agent_runtime_cluster_instances_pkey PRIMARY KEY (instance_id)
    )`,
  ];
}

export class ClusterInstances1765000000000 implements MigrationInterface {
  name = 'ClusterInstances1765000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of clusterInstancesDdl()) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE IF EXISTS agent_runtime_cluster_instances');
  }
}
