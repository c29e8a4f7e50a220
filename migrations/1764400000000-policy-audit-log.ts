import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The hash-chained, append-only policy audit log (spec 02 §9): the log table, its one-row head,
 * and triggers refusing UPDATE, DELETE and TRUNCATE of the log.
 */
export class PolicyAuditLog1764400000000 implements MigrationInterface {
  name = 'PolicyAuditLog1764400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE agent_runtime_policy_audit_log (
        seq bigint NOT NULL,
        decision_id text NOT NULL,
        decided_at_ms bigint NOT NULL,
        policy_id text NOT NULL,
        operation text NOT NULL,
        subject text NOT NULL,
        outcome text NOT NULL,
        reason text NOT NULL,
        policy_fingerprint char(64) NOT NULL,
        decision_json text NOT NULL,
        prev_hash char(64) NOT NULL,
        row_hash char(64) NOT NULL,
        appended_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT agent_runtime_policy_audit_log_pkey PRIMARY KEY (seq),
        CONSTRAINT agent_runtime_policy_audit_log_decision_id_key UNIQUE (decision_id),
        CONSTRAINT agent_runtime_policy_audit_log_row_hash_key UNIQUE (row_hash)
      )`);
    await queryRunner.query(
      `CREATE INDEX agent_runtime_policy_audit_log_decided_at_ms_idx ON agent_runtime_policy_audit_log (decided_at_ms)`,
    );
    await queryRunner.query(`
      CREATE TABLE agent_runtime_policy_audit_head (
        id smallint NOT NULL,
        last_seq bigint NOT NULL,
        last_hash char(64) NOT NULL,
        CONSTRAINT agent_runtime_policy_audit_head_pkey PRIMARY KEY (id),
        CONSTRAINT agent_runtime_policy_audit_head_single_row CHECK (id = 1)
      )`);
    await queryRunner.query(`INSERT INTO agent_runtime_policy_audit_head (id, last_seq, last_hash) VALUES (1, 0, repeat('0', 64))`);
    await queryRunner.query(`
      CREATE FUNCTION agent_runtime_policy_audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'agent_runtime_policy_audit_log is append-only' USING ERRCODE = 'insufficient_privilege';
      END
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER agent_runtime_policy_audit_log_no_change BEFORE UPDATE OR DELETE ON agent_runtime_policy_audit_log
      FOR EACH ROW EXECUTE FUNCTION agent_runtime_policy_audit_log_append_only()`);
    await queryRunner.query(`
      CREATE TRIGGER agent_runtime_policy_audit_log_no_truncate BEFORE TRUNCATE ON agent_runtime_policy_audit_log
      FOR EACH STATEMENT EXECUTE FUNCTION agent_runtime_policy_audit_log_append_only()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE agent_runtime_policy_audit_head`);
    await queryRunner.query(`DROP TABLE agent_runtime_policy_audit_log`);
    await queryRunner.query(`DROP FUNCTION agent_runtime_policy_audit_log_append_only()`);
  }
}
