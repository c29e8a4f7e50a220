import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Wall-clock epoch milliseconds as the server reads them, for the rows the migration inserts. */
const NOW_MS = `floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint`;

const JOBS = 'agent_runtime_memory_outbox_jobs';
const USAGE = 'agent_runtime_memory_outbox_usage';
const ACTIVE = `('pending', 'running', 'retry_wait')`;

/**
 * The statements creating the tables of the memory outbox (spec 07 §6.1): the jobs with their
 * four partial indexes (due, lease, scope, terminal) and the usage counters with the `global` and
 * `health` rows. Kept in this file, not in `src/`, so the migration never changes after it has
 * been applied somewhere. The erasure epochs table belongs to migration `RuntimeMemory1764900000001`.
 */
export function memoryOutboxDdl(): string[] {
  return [
    `CREATE TABLE ${JOBS} (
      job_id text COLLATE "C" NOT NULL,
      adapter_id text COLLATE "C" NOT NULL,
      app_name text COLLATE "C" NOT NULL,
      user_id text COLLATE "C" NOT NULL,
      epoch bigint NOT NULL,
      phase text NOT NULL,
      events jsonb NOT NULL,
      event_count integer NOT NULL,
      job_bytes integer NOT NULL,
      attempts integer NOT NULL,
      max_attempts integer NOT NULL,
      due_at_ms bigint NOT NULL,
      lease_token uuid,
      lease_until_ms bigint NOT NULL DEFAULT 0,
      last_error text,
      created_at_ms bigint NOT NULL,
      updated_at_ms bigint NOT NULL,
      finished_at_ms bigint,
      CONSTRAINT ${JOBS}_pkey PRIMARY KEY (job_id),
      CONSTRAINT ${JOBS}_phase_check CHECK (phase IN ('pending', 'running', 'retry_wait', 'completed', 'failed', 'cancelled')),
      CONSTRAINT ${JOBS}_lease_check CHECK ((phase = 'running') = (lease_token IS NOT NULL)),
      CONSTRAINT ${JOBS}_attempts_check CHECK (attempts >= 0 AND attempts <= max_attempts),
      CONSTRAINT ${JOBS}_max_attempts_check CHECK (max_attempts >= 1 AND max_attempts <= 10),
      CONSTRAINT ${JOBS}_finished_check CHECK ((finished_at_ms IS NULL) = (phase IN ${ACTIVE}))
    )`,
    `CREATE INDEX ${JOBS}_due_idx ON ${JOBS} (due_at_ms, created_at_ms, job_id) WHERE phase IN ('pending', 'retry_wait')`,
    `CREATE INDEX ${JOBS}_lease_idx ON ${JOBS} (lease_until_ms) WHERE phase = 'running'`,
    `CREATE INDEX ${JOBS}_scope_idx ON ${JOBS} (app_name, user_id, epoch) WHERE finished_at_ms IS NULL`,
    `CREATE INDEX ${JOBS}_terminal_idx ON ${JOBS} (finished_at_ms, job_id) WHERE finished_at_ms IS NOT NULL`,
    `CREATE TABLE ${USAGE} (
      usage_key text COLLATE "C" NOT NULL,
      active_jobs integer NOT NULL,
      active_bytes bigint NOT NULL,
      terminal_jobs integer NOT NULL,
      updated_at_ms bigint NOT NULL,
      CONSTRAINT ${USAGE}_pkey PRIMARY KEY (usage_key),
      CONSTRAINT ${USAGE}_key_check CHECK (usage_key IN ('global', 'health') OR usage_key ~ '^scope:[0-9a-f]{64}$'),
      CONSTRAINT ${USAGE}_counters_check CHECK (active_jobs >= 0 AND active_bytes >= 0 AND terminal_jobs >= 0)
    )`,
    `INSERT INTO ${USAGE} (usage_key, active_jobs, active_bytes, terminal_jobs, updated_at_ms) VALUES ('global', 0, 0, 0, ${NOW_MS}), ('health', 0, 0, 0, ${NOW_MS})`,
  ];
}

/** Creates the tables of the memory outbox (spec 07 §6.1). */
export class MemoryOutbox1764900000002 implements MigrationInterface {
  name = 'MemoryOutbox1764900000002';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of memoryOutboxDdl()) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE IF EXISTS agent_runtime_memory_outbox_jobs, agent_runtime_memory_outbox_usage');
  }
}
