import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The statements creating the tables of the Postgres artifact adapter (spec 07 §2): one row per
 * stored version, and one head row per `(scope, filename)` whose `next_version` is never lowered, so
 * a number is never given twice, even after every version is deleted. `session_id` is `''` for
 * user-level artifacts. Text keys sort bytewise (`COLLATE "C"`). A version row needs its head row,
 * and a head row with versions cannot be deleted.
 */
export function runtimeArtifactsDdl(): string[] {
  return [
    `CREATE TABLE agent_runtime_artifact_heads (
      app_name text COLLATE "C" NOT NULL,
      user_id text COLLATE "C" NOT NULL,
      session_id text COLLATE "C" NOT NULL,
      filename text COLLATE "C" NOT NULL,
      next_version bigint NOT NULL,
      CONSTRAINT agent_runtime_artifact_heads_pkey PRIMARY KEY (app_name, user_id, session_id, filename),
      CONSTRAINT agent_runtime_artifact_heads_next_version_check CHECK (next_version >= 1)
    )`,
    `CREATE TABLE agent_runtime_artifacts (
      app_name text COLLATE "C" NOT NULL,
      user_id text COLLATE "C" NOT NULL,
      session_id text COLLATE "C" NOT NULL,
      filename text COLLATE "C" NOT NULL,
      version bigint NOT NULL,
      data bytea NOT NULL,
      size_bytes bigint NOT NULL,
      sha256 text NOT NULL,
      mime_type text NOT NULL,
      custom_metadata jsonb NOT NULL,
      created_at_ms bigint NOT NULL,
      CONSTRAINT agent_runtime_artifacts_pkey PRIMARY KEY (app_name, user_id, session_id, filename, version),
      CONSTRAINT agent_runtime_artifacts_version_check CHECK (version >= 1),
      CONSTRAINT agent_runtime_artifacts_size_check CHECK (size_bytes = octet_length(data)),
      CONSTRAINT agent_runtime_artifacts_sha256_check CHECK (sha256 ~ '^[0-9a-f]{64}$'),
      CONSTRAINT agent_runtime_artifacts_metadata_check CHECK (jsonb_typeof(custom_metadata) = 'object'),
      CONSTRAINT agent_runtime_artifacts_head_fkey FOREIGN KEY (app_name, user_id, session_id, filename)
        REFERENCES agent_runtime_artifact_heads (app_name, user_id, session_id, filename) ON DELETE RESTRICT
    )`,
  ];
}

/** Creates the tables of the Postgres artifact adapter (spec 07 §2). */
export class RuntimeArtifacts1764900000000 implements MigrationInterface {
  name = 'RuntimeArtifacts1764900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of runtimeArtifactsDdl()) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE IF EXISTS agent_runtime_artifacts, agent_runtime_artifact_heads');
  }
}
