import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The Runner's durable sessions (spec 03 §4): `agent_runtime_sessions`, one row per session holding
 * its state and the last event `seq`, and `agent_runtime_session_events`, the append-only events of
 * each session keyed by `(session_id, seq)`, removed with their session.
 */
export class RunnerSessions1764700000000 implements MigrationInterface {
  name = 'RunnerSessions1764700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE agent_runtime_sessions (
      session_id text NOT NULL,
      app_name text NOT NULL,
      user_id text NOT NULL,
      state jsonb NOT NULL,
      state_version bigint NOT NULL DEFAULT 0,
      last_seq bigint NOT NULL DEFAULT 0,
      created_at_ms bigint NOT NULL,
      updated_at_ms bigint NOT NULL,
      CONSTRAINT agent_runtime_sessions_pkey PRIMARY KEY (session_id),
      CONSTRAINT agent_runtime_sessions_state_check CHECK (jsonb_typeof(state) = 'object'),
      CONSTRAINT agent_runtime_sessions_counters_check CHECK (state_version >= 0 AND last_seq >= 0)
    )`);
    await queryRunner.query(`CREATE INDEX agent_runtime_sessions_owner_updated_idx ON agent_runtime_sessions (app_name, user_id, updated_at_ms)`);
    await queryRunner.query(`CREATE TABLE agent_runtime_session_events (
      session_id text NOT NULL,
      seq bigint NOT NULL,
      event_id text NOT NULL,
      invocation_id text NOT NULL,
      author text NOT NULL,
      kind text NOT NULL,
      content jsonb NOT NULL,
      actions jsonb,
      created_at_ms bigint NOT NULL,
      CONSTRAINT agent_runtime_session_events_pkey PRIMARY KEY (session_id, seq),
      CONSTRAINT agent_runtime_session_events_event_id_key UNIQUE (event_id),
      CONSTRAINT agent_runtime_session_events_seq_check CHECK (seq >= 1),
      CONSTRAINT agent_runtime_session_events_kind_check CHECK (kind IN ('user_message', 'model_turn', 'tool_response', 'confirmation_requested', 'final_output', 'policy_audit')),
      CONSTRAINT agent_runtime_session_events_actions_check CHECK (actions IS NULL OR jsonb_typeof(actions) = 'object'),
      CONSTRAINT agent_runtime_session_events_session_id_fkey FOREIGN KEY (session_id) REFERENCES agent_runtime_sessions (session_id) ON DELETE CASCADE
    )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE agent_runtime_session_events');
    await queryRunner.query('DROP TABLE agent_runtime_sessions');
  }
}
