import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The statements creating the tables of the Postgres memory adapter and the erasure epochs it shares with the outbox (spec 07 §2, §6.1). */
export function runtimeMemoryDdl(): string[] {
  return [
    `CREATE TABLE agent_runtime_memory_erasure_epochs (
      app_name text COLLATE "C" NOT NULL,
      user_id text COLLATE "C" NOT NULL,
      epoch bigint NOT NULL,
      updated_at_ms bigint NOT NULL,
      CONSTRAINT agent_runtime_memory_erasure_epochs_pkey PRIMARY KEY (app_name, user_id),
      CONSTRAINT agent_runtime_memory_erasure_epochs_epoch_check CHECK (epoch >= 0)
    )`,
    `CREATE TABLE agent_runtime_memory_entries (
      entry_id text COLLATE "C" NOT NULL,
      app_name text COLLATE "C" NOT NULL,
      user_id text COLLATE "C" NOT NULL,
      event_id text COLLATE "C" NOT NULL,
      epoch bigint NOT NULL,
      author text NOT NULL,
      content text NOT NULL,
      metadata jsonb NOT NULL,
      timestamp_ms bigint NOT NULL,
      created_at_ms bigint NOT NULL,
      search tsvector GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, content)) STORED,
      CONSTRAINT agent_runtime_memory_entries_pkey PRIMARY KEY (entry_id),
      CONSTRAINT agent_runtime_memory_entries_event_key UNIQUE (app_name, user_id, event_id),
      CONSTRAINT agent_runtime_memory_entries_epoch_check CHECK (epoch >= 0),
      CONSTRAINT agent_runtime_memory_entries_metadata_check CHECK (jsonb_typeof(metadata) = 'object')
    )`,
    'CREATE INDEX agent_runtime_memory_entries_search_idx ON agent_runtime_memory_entries USING gin (search)',
    'CREATE INDEX agent_runtime_memory_entries_scope_time_idx ON agent_runtime_memory_entries (app_name, user_id, timestamp_ms)',
  ];
}

/** Creates the tables of the Postgres memory adapter and the erasure epochs it shares with the outbox (spec 07 §2, §6.1). */
export class RuntimeMemory1764900000001 implements MigrationInterface {
  name = 'RuntimeMemory1764900000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of runtimeMemoryDdl()) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE IF EXISTS agent_runtime_memory_entries, agent_runtime_memory_erasure_epochs');
  }
}
