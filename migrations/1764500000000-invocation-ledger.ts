import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The statements creating an invocation ledger table named `table` (spec 04 §2), with constraint and
 * index names derived from it. Kept in this file, not in `src/`, so the migration never changes
 * after it has been applied somewhere; `createLedgerMigration(tableName)` reuses it for custom names.
 * `table` must already be a validated identifier (`^[a-z_][a-z0-9_]{0,43}$`).
 */
export function invocationLedgerDdl(table: string): string[] {
  return [
    `CREATE TABLE ${table} (
      id text NOT NULL,
      format integer NOT NULL DEFAULT 1,
      workflow_id text NOT NULL,
      workflow_version text NOT NULL,
      kind text NOT NULL,
      checkpoint jsonb NOT NULL,
      phase text NOT NULL DEFAULT 'ready',
      outcome jsonb,
      owner_token uuid,
      owner_instance text,
      lease_until_ms bigint NOT NULL DEFAULT 0,
      revision bigint NOT NULL DEFAULT 0,
      created_at_ms bigint NOT NULL,
      updated_at_ms bigint NOT NULL,
      CONSTRAINT ${table}_pkey PRIMARY KEY (id),
      CONSTRAINT ${table}_format_check CHECK (format = 1),
      CONSTRAINT ${table}_phase_check CHECK (phase IN ('ready', 'running', 'paused', 'completed', 'failed', 'timed_out', 'cancelled')),
      CONSTRAINT ${table}_owner_check CHECK (
        (phase = 'running') = (owner_token IS NOT NULL)
        AND (owner_token IS NULL) = (owner_instance IS NULL)
        AND (phase = 'running' OR lease_until_ms = 0)),
      CONSTRAINT ${table}_counters_check CHECK (lease_until_ms >= 0 AND revision >= 0)
    )`,
    `CREATE INDEX ${table}_running_lease_idx ON ${table} (lease_until_ms) WHERE phase = 'running'`,
    `CREATE INDEX ${table}_owner_instance_idx ON ${table} (owner_instance) WHERE owner_instance IS NOT NULL`,
  ];
}

/** The durable invocation ledger table `agent_runtime_invocations` (spec 04 §2). */
export class InvocationLedger1764500000000 implements MigrationInterface {
  name = 'InvocationLedger1764500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const statement of invocationLedgerDdl('agent_runtime_invocations')) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE agent_runtime_invocations');
  }
}
