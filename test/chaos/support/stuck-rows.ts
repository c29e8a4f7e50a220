import { Client } from 'pg';

/** Rows of one table that should not be there once the service settled. */
export interface StuckRows {
  readonly table: string;
  /** What is wrong with them, e.g. `phase running` or `owned (owner_instance set, status pending)`. */
  readonly what: string;
  readonly count: number;
  /** The instances holding them (never a token), for the report. */
  readonly holders: readonly string[];
}

/** The survey: the stuck rows, and what the survey did not know how to judge. */
export interface RowSurvey {
  readonly stuck: readonly StuckRows[];
  /** Columns that look like ownership (owner, lease, instance, claim) the survey has no rule for. */
  readonly unknownColumns: readonly string[];
  /** Rows in other unfinished states (queued, pending, paused, …), per table and state: not asserted, reported. */
  readonly unfinished: readonly { table: string; state: string; count: number }[];
  /** The tables the survey read. */
  readonly tables: readonly string[];
}

/** The state columns of the package's tables; a row in `running` or `ready` is stuck. */
const STATE_COLUMNS = ['phase', 'status'];
const STUCK_STATES = ['running', 'ready'];
/** Finished states: the row's owner column is history (the run store keeps its last owner), not a claim. */
const FINISHED_STATES = ['completed', 'failed', 'cancelled', 'timed_out'];
/** Columns naming the instance or token that holds a row. */
const OWNER_COLUMNS = ['owner_instance', 'instance_id', 'owner_token', 'lease_token'];
/** The owner columns that name an instance (tokens are never reported). */
const INSTANCE_COLUMNS = ['owner_instance', 'instance_id'];
/** Columns that match the ownership pattern but hold no claim. */
const NOT_CLAIMS = new Set(['lease_until_ms', 'owner_principal']);
/**
 * Membership, not a claim: a live instance keeps its row for as long as it runs (a dead one's row is
 * removed by the next reap), so it is not counted.
 */
const MEMBERSHIP_TABLES = new Set(['agent_runtime_cluster_instances']);
const LOOKS_OWNED = /owner|lease|instance|claim/;

/**
 * Reads every `agent_runtime_*` table with a state or owner column: rows `running` or `ready`, and
 * rows held by an instance (an owner, lease or instance column set while the row is neither
 * finished nor paused, which waits for a person, not an instance; any row of a table without a
 * state column, such as held admission permits and queued requests).
 */
export async function surveyRows(url: string): Promise<RowSurvey> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    const { rows } = await client.query<{ table_name: string; columns: string[] }>(
      `SELECT table_name, array_agg(column_name::text ORDER BY ordinal_position) AS columns FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name LIKE 'agent\\_runtime\\_%' GROUP BY table_name ORDER BY table_name`,
    );
    const stuck: StuckRows[] = [];
    const unfinished: { table: string; state: string; count: number }[] = [];
    const unknownColumns: string[] = [];
    const tables: string[] = [];
    for (const { table_name: table, columns } of rows) {
      if (MEMBERSHIP_TABLES.has(table)) continue;
      const state = STATE_COLUMNS.find((column) => columns.includes(column));
      const owners = OWNER_COLUMNS.filter((column) => columns.includes(column));
      const instanceColumn = INSTANCE_COLUMNS.find((column) => columns.includes(column));
      unknownColumns.push(...columns.filter((column) => LOOKS_OWNED.test(column) && !OWNER_COLUMNS.includes(column) && !NOT_CLAIMS.has(column)).map((column) => `${table}.${column}`));
      if (!state && owners.length === 0) continue;
      tables.push(table);
      const holders = instanceColumn ? `array_remove(array_agg(DISTINCT ${instanceColumn}), NULL)` : `'{}'::text[]`;
      const ownedSql = owners.length === 0 ? 'false' : `(${owners.map((column) => `${column} IS NOT NULL`).join(' OR ')})`;
      if (state) {
        const counted = await client.query<{ state: string; count: number; owned: number; holders: string[] }>(
          `SELECT ${state} AS state, count(*)::int AS count, (count(*) FILTER (WHERE ${ownedSql}))::int AS owned, ${holders} AS holders
             FROM ${table} WHERE ${state} <> ALL ($1::text[]) GROUP BY ${state} ORDER BY ${state}`,
          [FINISHED_STATES],
        );
        for (const row of counted.rows) {
          const heldBy = owners.length ? ` (${owners.join('/')} set)` : '';
          if (STUCK_STATES.includes(row.state)) stuck.push({ table, what: `${state} ${row.state}`, count: row.count, holders: row.holders });
          else if (row.state !== 'paused' && row.owned > 0) stuck.push({ table, what: `owned${heldBy} while ${state} ${row.state}`, count: row.owned, holders: row.holders });
          else unfinished.push({ table, state: row.state, count: row.count });
        }
      } else {
        const held = await client.query<{ count: number; holders: string[] }>(`SELECT count(*)::int AS count, ${holders} AS holders FROM ${table} WHERE ${ownedSql}`);
        const { count, holders: heldBy } = held.rows[0];
        if (count > 0) stuck.push({ table, what: `held (${owners.join('/')} set)`, count, holders: heldBy });
      }
    }
    return { stuck, unknownColumns, unfinished, tables };
  } finally {
    await client.end().catch(() => undefined);
  }
}
