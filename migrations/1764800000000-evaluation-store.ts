import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Wall-clock epoch milliseconds as the server reads them, for the rows the migration inserts. */
const NOW_MS = `floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint`;

/**
 * The statements creating the five tables of the evaluation store (spec 05 §2.2) named
 * `<prefix>set_revisions`, `<prefix>jobs`, `<prefix>baselines`, `<prefix>usage` and
 * `<prefix>identity`, with the global usage row (`scope_app` `''`) and the identity row (a random
 * UUID). Constraint and index names start with the prefix and end with a short suffix, so each stays
 * within 63 characters for the longest prefix (41 characters). Kept in this file, not in `src/`, so
 * the migration never changes after it has been applied somewhere; `createEvalStoreMigrations(prefix)`
 * reuses it. `prefix` must already be validated (`^[a-z_][a-z0-9_]{0,40}$`).
 */
export function evalStoreDdl(prefix: string): string[] {
  const p = prefix;
  return [
    `CREATE TABLE ${p}set_revisions (
      scope_app text COLLATE "C" NOT NULL,
      eval_set_id text COLLATE "C" NOT NULL,
      eval_set_version text COLLATE "C" NOT NULL,
      digest text NOT NULL,
      content jsonb NOT NULL,
      content_bytes integer NOT NULL,
      created_at_ms bigint NOT NULL,
      CONSTRAINT ${p}set_revisions_pkey PRIMARY KEY (scope_app, eval_set_id, eval_set_version),
      CONSTRAINT ${p}set_digest_check CHECK (digest ~ '^[0-9a-f]{64}$')
    )`,
    `CREATE INDEX ${p}set_created_idx ON ${p}set_revisions (scope_app, created_at_ms)`,
    `CREATE TABLE ${p}jobs (
      job_id text COLLATE "C" NOT NULL,
      scope_app text COLLATE "C" NOT NULL,
      eval_set_id text COLLATE "C" NOT NULL,
      eval_set_version text COLLATE "C" NOT NULL,
      agent text NOT NULL,
      metrics jsonb NOT NULL,
      options jsonb NOT NULL,
      metadata jsonb NOT NULL,
      request_bytes integer NOT NULL,
      record_bytes integer NOT NULL,
      phase text NOT NULL,
      revision bigint NOT NULL,
      created_at_ms bigint NOT NULL,
      updated_at_ms bigint NOT NULL,
      reason text,
      result jsonb,
      started_at_ms bigint,
      finished_at_ms bigint,
      CONSTRAINT ${p}jobs_pkey PRIMARY KEY (job_id),
      CONSTRAINT ${p}job_id_check CHECK (job_id ~ '^eval-[0-9a-f]{32}$'),
      CONSTRAINT ${p}job_phase_check CHECK (phase IN ('queued', 'running', 'completed', 'failed', 'timed_out', 'cancelled')),
      CONSTRAINT ${p}job_reason_check CHECK (octet_length(reason) <= 4096),
      CONSTRAINT ${p}job_result_check CHECK (result IS NULL OR phase = 'completed'),
      CONSTRAINT ${p}job_finished_check CHECK ((finished_at_ms IS NULL) = (phase IN ('queued', 'running'))),
      CONSTRAINT ${p}job_set_fkey FOREIGN KEY (scope_app, eval_set_id, eval_set_version)
        REFERENCES ${p}set_revisions (scope_app, eval_set_id, eval_set_version) ON DELETE RESTRICT
    )`,
    `CREATE INDEX ${p}job_created_idx ON ${p}jobs (scope_app, created_at_ms, job_id)`,
    `CREATE INDEX ${p}job_active_idx ON ${p}jobs (phase) WHERE phase IN ('queued', 'running')`,
    `CREATE INDEX ${p}job_finished_idx ON ${p}jobs (finished_at_ms, job_id) WHERE finished_at_ms IS NOT NULL`,
    // the referencing side of job_set_fkey: deleting a set revision (prune) checks it without a scan of the jobs
    `CREATE INDEX ${p}job_set_idx ON ${p}jobs (scope_app, eval_set_id, eval_set_version)`,
    `CREATE TABLE ${p}baselines (
      scope_app text COLLATE "C" NOT NULL,
      eval_set_id text COLLATE "C" NOT NULL,
      name text COLLATE "C" NOT NULL,
      job_id text COLLATE "C" NOT NULL,
      created_at_ms bigint NOT NULL,
      updated_at_ms bigint NOT NULL,
      CONSTRAINT ${p}baselines_pkey PRIMARY KEY (scope_app, eval_set_id, name),
      CONSTRAINT ${p}baseline_job_fkey FOREIGN KEY (job_id) REFERENCES ${p}jobs (job_id) ON DELETE RESTRICT
    )`,
    `CREATE INDEX ${p}baseline_job_idx ON ${p}baselines (job_id)`,
    `CREATE TABLE ${p}usage (
      scope_app text COLLATE "C" NOT NULL,
      sets integer NOT NULL,
      jobs integer NOT NULL,
      baselines integer NOT NULL,
      bytes bigint NOT NULL,
      updated_at_ms bigint NOT NULL,
      CONSTRAINT ${p}usage_pkey PRIMARY KEY (scope_app),
      CONSTRAINT ${p}usage_counters_check CHECK (sets >= 0 AND jobs >= 0 AND baselines >= 0 AND bytes >= 0)
    )`,
    `INSERT INTO ${p}usage (scope_app, sets, jobs, baselines, bytes, updated_at_ms) VALUES ('', 0, 0, 0, 0, ${NOW_MS})`,
    `CREATE TABLE ${p}identity (
      singleton boolean NOT NULL,
      identity_uuid uuid NOT NULL,
      created_at_ms bigint NOT NULL,
      CONSTRAINT ${p}identity_pkey PRIMARY KEY (singleton),
      CONSTRAINT ${p}identity_check CHECK (singleton)
    )`,
    `INSERT INTO ${p}identity (singleton, identity_uuid, created_at_ms) VALUES (true, gen_random_uuid(), ${NOW_MS})`,
  ];
}

/** The tables of {@link evalStoreDdl} in the order `down` drops them (referencing tables first). */
export function evalStoreTablesToDrop(prefix: string): string[] {
  return ['baselines', 'jobs', 'set_revisions', 'usage', 'identity'].map((table) => `${prefix}${table}`);
}

/** The evaluation store's tables with the default prefix `agent_runtime_eval_` (spec 05 §2.2). */
export class EvaluationStore1764800000000 implements MigrationInterface {
  name = 'EvaluationStore1764800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of evalStoreDdl('agent_runtime_eval_')) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of evalStoreTablesToDrop('agent_runtime_eval_')) await queryRunner.query(`DROP TABLE ${table}`);
  }
}
