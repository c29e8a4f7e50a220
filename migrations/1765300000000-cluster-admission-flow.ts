import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Flow control across the cluster (spec 09 §9): permits and queued requests carry their tenant,
 * estimated cost, class and start tag, a permit whether its agent was saturated when it was granted
 * (the AIMD rule of spec 09 §8) and a queued request its enqueue time on the deciding instance's wall
 * clock (aging); the rate buckets of each scope instance (levels as of a wall-clock time), the fair-queueing finish tags and virtual time, and each adaptive agent's effective limit
 * live in three tables, written only under the decision lock.
 */
export function clusterAdmissionFlowDdl(): string[] {
  return [
    `ALTER TABLE agent_runtime_admission_permits
      ADD COLUMN tenant_id text COLLATE "C",
      ADD COLUMN cost double precision NOT NULL DEFAULT 1,
      ADD COLUMN saturated boolean NOT NULL DEFAULT false`,
    `ALTER TABLE agent_runtime_admission_queue
      ADD COLUMN tenant_id text COLLATE "C",
      ADD COLUMN cost double precision NOT NULL DEFAULT 1,
      ADD COLUMN rank smallint NOT NULL DEFAULT 1,
      ADD COLUMN start_tag double precision NOT NULL DEFAULT 0,
      ADD COLUMN enqueued_ms double precision NOT NULL DEFAULT 0`,
    `CREATE INDEX agent_runtime_admission_queue_flow_seq_idx ON agent_runtime_admission_queue (agent_id, tenant_id, seq)`,
    `CREATE INDEX agent_runtime_admission_permits_tenant_idx ON agent_runtime_admission_permits (tenant_id)`,
    `CREATE TABLE agent_runtime_admission_buckets (
      scope text COLLATE "C" NOT NULL,
      scope_id text COLLATE "C" NOT NULL,
      requests double precision NOT NULL,
      cost double precision NOT NULL,
      at_ms double precision NOT NULL,
      CONSTRAINT agent_runtime_admission_buckets_pkey PRIMARY KEY (scope, scope_id),
      CONSTRAINT agent_runtime_admission_buckets_scope CHECK (scope = ANY (ARRAY['global'::text, 'agent'::text, 'tenant'::text]))
    )`,
    `CREATE TABLE agent_runtime_admission_fair_tags (
      tag_key text COLLATE "C" NOT NULL,
      tag double precision NOT NULL,
      CONSTRAINT agent_runtime_admission_fair_tags_pkey PRIMARY KEY (tag_key)
    )`,
    `CREATE TABLE agent_runtime_admission_adaptive (
      agent_id text COLLATE "C" NOT NULL,
      effective_limit integer NOT NULL,
      ok_count integer NOT NULL,
      last_decrease_ms double precision,
      CONSTRAINT agent_runtime_admission_adaptive_pkey PRIMARY KEY (agent_id)
    )`,
  ];
}

export class ClusterAdmissionFlow1765300000000 implements MigrationInterface {
  name = 'ClusterAdmissionFlow1765300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of clusterAdmissionFlowDdl()) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE IF EXISTS agent_runtime_admission_adaptive');
    await queryRunner.query('DROP TABLE IF EXISTS agent_runtime_admission_fair_tags');
    await queryRunner.query('DROP TABLE IF EXISTS agent_runtime_admission_buckets');
    await queryRunner.query('DROP INDEX IF EXISTS agent_runtime_admission_permits_tenant_idx');
    await queryRunner.query('DROP INDEX IF EXISTS agent_runtime_admission_queue_flow_seq_idx');
    await queryRunner.query('ALTER TABLE agent_runtime_admission_queue DROP COLUMN IF EXISTS enqueued_ms, DROP COLUMN IF EXISTS start_tag, DROP COLUMN IF EXISTS rank, DROP COLUMN IF EXISTS cost, DROP COLUMN IF EXISTS tenant_id');
    await queryRunner.query('ALTER TABLE agent_runtime_admission_permits DROP COLUMN IF EXISTS saturated, DROP COLUMN IF EXISTS cost, DROP COLUMN IF EXISTS tenant_id');
  }
}
