import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The tables of cluster admission (spec 08 §3): the one configuration row (the limits'
 * fingerprint), the permits held across the cluster and the queue. A queued request carries the
 * permit id it will be granted under, so whichever instance grants it writes the permit row
 * without a round trip to the requester.
 */
export function clusterAdmissionDdl(): string[] {
  return [
    `CREATE TABLE agent_runtime_admission_config (
      config_key text COLLATE "C" NOT NULL DEFAULT 'limits',
      fingerprint text COLLATE "C" NOT NULL,
      limits jsonb NOT NULL,
      written_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      CONSTRAINT agent_runtime_admission_config_pkey PRIMARY KEY (config_key),
      CONSTRAINT agent_runtime_admission_config_single CHECK (config_key = 'limits')
    )`,
    `CREATE TABLE agent_runtime_admission_permits (
      permit_id text COLLATE "C" NOT NULL,
      request_id text COLLATE "C" NOT NULL,
      agent_id text COLLATE "C" NOT NULL,
      instance_id text COLLATE "C" NOT NULL,
      granted_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      CONSTRAINT agent_runtime_admission_permits_pkey PRIMARY KEY (permit_id),
      CONSTRAINT agent_runtime_admission_permits_request_key UNIQUE (request_id)
    )`,
    `CREATE INDEX agent_runtime_admission_permits_agent_idx ON agent_runtime_admission_permits (agent_id)`,
    `CREATE INDEX agent_runtime_admission_permits_instance_idx ON agent_runtime_admission_permits (instance_id)`,
    `CREATE TABLE agent_runtime_admission_queue (
      request_id text COLLATE "C" NOT NULL,
      seq bigint GENERATED ALWAYS AS IDENTITY,
      permit_id text COLLATE "C" NOT NULL,
      agent_id text COLLATE "C" NOT NULL,
      instance_id text COLLATE "C" NOT NULL,
      deadline_at timestamptz,
      enqueued_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      CONSTRAINT agent_runtime_admission_queue_pkey PRIMARY KEY (request_id),
      CONSTRAINT agent_runtime_admission_queue_permit_key UNIQUE (permit_id)
    )`,
    `CREATE INDEX agent_runtime_admission_queue_agent_seq_idx ON agent_runtime_admission_queue (agent_id, seq)`,
    `CREATE UNIQUE INDEX agent_runtime_admission_queue_seq_idx ON agent_runtime_admission_queue (seq)`,
    `CREATE INDEX agent_runtime_admission_queue_instance_idx ON agent_runtime_admission_queue (instance_id)`,
  ];
}

export class ClusterAdmission1765000000001 implements MigrationInterface {
  name = 'ClusterAdmission1765000000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of clusterAdmissionDdl()) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE IF EXISTS agent_runtime_admission_queue');
    await queryRunner.query('DROP TABLE IF EXISTS agent_runtime_admission_permits');
    await queryRunner.query('DROP TABLE IF EXISTS agent_runtime_admission_config');
  }
}
