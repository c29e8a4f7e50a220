import type { TransactionClient } from '../../../../database/transaction-runner';
import { RunnerError } from '../../../runner.errors';
import type { RunError, RunStatus, RunStreamItem } from '../../run-registry.types';
import { isFinishedStatus, UNFINISHED_STATUSES, type NewRunStreamItem, type RunPatch, type StoredRun, type WriteCondition } from '../run-store';
import { decodeJson, encodeJson } from './run-json';
import type { RunStatements } from './run-sql';

/** A run as its row holds it: the stored run plus the columns only the store reads. */
export interface RunRow {
  readonly run: StoredRun;
  readonly owner_instance: string | null;
  readonly oldest_item_seq: number;
}

/** The frozen run of a row selected with the store's run columns. */
export function runRowOf(row: Record<string, unknown>): RunRow {
  const run: StoredRun = Object.freeze({
    schema_version: 1,
    run_id: row.run_id as string,
    agent: row.agent as string,
    session_id: row.session_id as string,
    invocation_id: (row.invocation_id as string | null) ?? null,
    status: row.status as RunStatus,
    pending_call_ids: decodeJson(row.pending_json as string) as readonly string[],
    created_at_ms: Number(row.created_at_ms),
    updated_at_ms: Number(row.updated_at_ms),
    last_seq: Number(row.last_item_seq),
    error: row.error_json === null ? null : (decodeJson(row.error_json as string) as RunError),
    user_id: row.user_id as string,
    owner_principal: (row.owner_principal as string | null) ?? null,
    durable: row.durable === true,
  });
  return { run, owner_instance: (row.owner_instance as string | null) ?? null, oldest_item_seq: Number(row.oldest_item_seq) };
}

/** The item of `seq` whose JSON (everything but `seq`) is `payloadJson`. */
export function itemOf(seq: number, payloadJson: string): RunStreamItem {
  return Object.freeze({ seq, ...(decodeJson(payloadJson) as object) }) as RunStreamItem;
}

/** The values of the `update` statement ($1..$9) for the run after a write. */
export function updateValues(run: StoredRun, owner: string | null, oldestSeq: number, encode: (value: unknown) => string): unknown[] {
  return [
    run.run_id,
    run.status,
    run.invocation_id,
    encode(run.pending_call_ids),
    run.error === null ? null : encode(run.error),
    owner,
    run.updated_at_ms,
    run.last_seq,
    oldestSeq,
  ];
}

/** Locks the run's row for the transaction; `undefined` for an unknown run. */
export async function lockRun(client: TransactionClient, sql: RunStatements, runId: string): Promise<RunRow | undefined> {
  const [row] = (await client.query(sql.lock, [runId])).rows;
  return row ? runRowOf(row) : undefined;
}

/** The run after a write: the patch's given fields (read back as the row holds them) and the new last seq. */
export function merged(run: StoredRun, patch: RunPatch | undefined, lastSeq: number): StoredRun {
  const next: Record<string, unknown> = { ...run, last_seq: lastSeq };
  for (const [key, value] of Object.entries(patch ?? {})) if (value !== undefined) next[key] = value;
  const stored = runRowOf({
    ...next,
    pending_json: encodeJson(next.pending_call_ids),
    error_json: next.error === null ? null : encodeJson(next.error),
    last_item_seq: lastSeq,
    oldest_item_seq: 0,
    owner_instance: null,
  });
  return stored.run;
}

/** The item's JSON without its seq; an item JSON cannot hold is refused (`invalid_run_request`, `{field: 'item'}`). */
export function payloadOf(item: NewRunStreamItem): string {
  try {
    return encodeJson(item);
  } catch {
    throw new RunnerError('invalid_run_request', { field: 'item' });
  }
}

const EXECUTING: readonly RunStatus[] = ['pending', 'running'];

/** Whether a write under `condition` may change the locked run: unfinished, in an expected status, and owned by `instanceId` when it must be. */
export function isWritable(locked: RunRow, condition: WriteCondition, instanceId: string): boolean {
  const { run } = locked;
  if (isFinishedStatus(run.status) || !(condition.expect ?? UNFINISHED_STATUSES).includes(run.status)) return false;
  return condition.owned !== true || locked.owner_instance === instanceId;
}

/** The owner after `patch`: the writing instance once the run executes (again), else unchanged. */
export function ownerAfterPatch(locked: RunRow, patch: RunPatch | undefined, instanceId: string): string | null {
  return patch?.status !== undefined && EXECUTING.includes(patch.status) ? instanceId : locked.owner_instance;
}
