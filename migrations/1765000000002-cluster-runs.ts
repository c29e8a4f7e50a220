import type { MigrationInterface, QueryRunner } from 'typeorm';

const UNFINISHED = `('pending', 'running', 'paused')`;
const FINISHED = `('completed', 'failed', 'cancelled', 'timed_out')`;
const STATUSES = `('pending', 'running', 'paused', 'completed', 'failed', 'cancelled', 'timed_out')`;

/**
 * The tables of the Postgres run store (spec 08 §4): runs with their owner instance, and their
 * stream items numbered per run. Items go with their run (`ON DELETE CASCADE`).
 */
export function clusterRunsDdl(): string[] {
  return [
    `CREATE TABLE agent_runtime_runs (
      run_id text COLLATE "C" NOT NULL,
      agent text COLLATE "C" NOT NULL,
      user_id text COLLATE "C" NOT NULL,
      session_id text COLLATE "C" NOT NULL,
      invocation_id text COLLATE "C",
      status text COLLATE "C" NOT NULL,
      pending_call_ids jsonb NOT NULL DEFAULT '[]'::jsonb,
      error jsonb,
      owner_instance text COLLATE "C",
      durable boolean NOT NULL,
      created_at_ms bigint NOT NULL,
      updated_at_ms bigint NOT NULL,
      last_item_seq integer NOT NULL DEFAULT 0,
      oldest_item_seq integer NOT NULL DEFAULT 1,
      CONSTRAINT agent_runtime_runs_pkey PRIMARY KEY (run_id),
      CONSTRAINT agent_runtime_runs_status_check CHECK (status IN ${STATUSES})
    )`,
    `CREATE INDEX agent_runtime_runs_active_idx ON agent_runtime_runs (owner_instance) WHERE status IN ${UNFINISHED}`,
    `CREATE INDEX agent_runtime_runs_finished_idx ON agent_runtime_runs (updated_at_ms) WHERE status IN ${FINISHED}`,
    `CREATE TABLE agent_runtime_run_items (
      run_id text COLLATE "C" NOT NULL,
      seq integer NOT NULL,
      type text COLLATE "C" NOT NULL,
      payload jsonb NOT NULL,
      created_at_ms bigint NOT NULL,
      CONSTRAINT agent_runtime_run_items_pkey PRIMARY KEY (run_id, seq),
      CONSTRAINT agent_runtime_run_items_run_fkey FOREIGN KEY (run_id) REFERENCES agent_runtime_runs (run_id) ON DELETE CASCADE
    )`,
  ];
}

export class ClusterRuns1765000000002 implements MigrationInterface {
  name = 'ClusterRuns1765000000002';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of clusterRunsDdl()) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE IF EXISTS agent_runtime_run_items');
    await queryRunner.query('DROP TABLE IF EXISTS agent_runtime_runs');
  }
}
