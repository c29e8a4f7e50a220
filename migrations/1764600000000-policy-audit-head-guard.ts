import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Body of `agent_runtime_policy_audit_head_guard()`: the head moves only by an append, that is to
 * `last_seq + 1` and the `row_hash` of the log row of that `seq` chained to the old head hash (the
 * row the same statement inserted); any other INSERT, UPDATE, DELETE or TRUNCATE of the head raises.
 * The log is looked up in the head's own schema, whatever the session's `search_path`.
 */
export const AUDIT_HEAD_GUARD_BODY = `
DECLARE
  appended boolean := false;
BEGIN
  IF TG_OP = 'UPDATE' THEN
    IF NEW.id = OLD.id AND NEW.last_seq = OLD.last_seq + 1 THEN
      EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I.agent_runtime_policy_audit_log WHERE seq = $1 AND row_hash = $2 AND prev_hash = $3)', TG_TABLE_SCHEMA)
        INTO appended USING NEW.last_seq, NEW.last_hash, OLD.last_hash;
    END IF;
    IF appended THEN
      RETURN NEW;
    END IF;
  END IF;
  RAISE EXCEPTION 'agent_runtime_policy_audit_head moves only by an append to agent_runtime_policy_audit_log' USING ERRCODE = 'insufficient_privilege';
END
`;

/**
 * Protects the chain head of the policy audit log (spec 02 §9): without it anyone who may write the
 * head could cut the log's tail and move the head back so that the shorter chain verifies.
 */
export class PolicyAuditHeadGuard1764600000000 implements MigrationInterface {
  name = 'PolicyAuditHeadGuard1764600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE FUNCTION agent_runtime_policy_audit_head_guard() RETURNS trigger LANGUAGE plpgsql AS $guard$${AUDIT_HEAD_GUARD_BODY}$guard$`,
    );
    await queryRunner.query(`
      CREATE TRIGGER agent_runtime_policy_audit_head_append_only BEFORE INSERT OR UPDATE OR DELETE ON agent_runtime_policy_audit_head
      FOR EACH ROW EXECUTE FUNCTION agent_runtime_policy_audit_head_guard()`);
    await queryRunner.query(`
      CREATE TRIGGER agent_runtime_policy_audit_head_no_truncate BEFORE TRUNCATE ON agent_runtime_policy_audit_head
      FOR EACH STATEMENT EXECUTE FUNCTION agent_runtime_policy_audit_head_guard()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER agent_runtime_policy_audit_head_no_truncate ON agent_runtime_policy_audit_head`);
    await queryRunner.query(`DROP TRIGGER agent_runtime_policy_audit_head_append_only ON agent_runtime_policy_audit_head`);
    await queryRunner.query(`DROP FUNCTION agent_runtime_policy_audit_head_guard()`);
  }
}
