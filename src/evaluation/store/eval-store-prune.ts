import type { TransactionClient } from '../../database/transaction-runner';
import type { EvalPruneOptions, EvalPruneReport } from '../eval.types';
import { EVAL_JOB_ID } from '../eval-scope';
import { decodeEvalCursor, encodeEvalCursor, isKeyInteger, isKeyText, type CursorPart } from './eval-cursor';
import { rowNumber, type EvalRow } from './eval-records';
import { MAX_EVAL_KEY_BYTES, pruneArguments } from './eval-store-arguments';
import type { EvalStoreContext } from './eval-store-context';
import type { EvalStoreStatements } from './eval-store-sql';
import { lockUsage, UsageChanges } from './eval-store-usage';

/** The scans of a prune, in their fixed order: baselines (only with `includeBaselines`), terminal jobs, set revisions. */
type Stage = 'baselines' | 'jobs' | 'sets';

/** Where a prune stopped: a stage, and the key of the last row scanned in it (`null`: its start). */
interface PrunePosition {
  readonly stage: Stage;
  readonly key: readonly CursorPart[] | null;
}

/** What one stage of one call did. */
interface PruneTally {
  baselines_deleted: number;
  jobs_deleted: number;
  set_revisions_deleted: number;
  bytes_reclaimed: number;
}

const STAGES: readonly Stage[] = ['baselines', 'jobs', 'sets'];
const isText = (value: unknown) => isKeyText(value, MAX_EVAL_KEY_BYTES);

/**
 * `prune` (spec 05 §6), one transaction under the global usage lock: scans at most `limit` rows,
 * in the fixed order baselines (`includeBaselines` only; those updated before `before`), terminal
 * jobs by `(finished_at_ms, job_id)` finished before `before`, then set revisions by key created
 * before `before`. A scanned row is deleted unless it is a baselined job (kept unless
 * `includeBaselines`, which deletes its baselines first) or a set revision some job still uses.
 * Queued and running jobs are never scanned. The cursor (base64url of `[stage, ...key]`) resumes
 * after the last row scanned; usage rows are updated in the same transaction.
 */
export async function pruneStore(context: EvalStoreContext, options: EvalPruneOptions): Promise<EvalPruneReport> {
  const args = pruneArguments(options, context.settings);
  const stages = args.includeBaselines ? STAGES : STAGES.slice(1);
  const start = args.cursor === undefined ? null : decodePruneCursor(args.cursor);
  const first = start === null ? 0 : Math.max(0, stages.indexOf(start.stage));
  return context.run(async (client, sql) => {
    const now = context.now();
    await lockUsage(client, sql, null, now);
    const tally: PruneTally = { baselines_deleted: 0, jobs_deleted: 0, set_revisions_deleted: 0, bytes_reclaimed: 0 };
    const changes = new UsageChanges();
    let remaining = args.limit;
    let position: PrunePosition | null = start;
    let hasMore = false;
    for (const stage of stages.slice(first)) {
      const after = position?.stage === stage ? position.key : null;
      position = { stage, key: after };
      const rows = await scan(client, sql, stage, args.before, after, remaining + 1);
      const taken = rows.slice(0, remaining);
      await PRUNERS[stage](client, sql, taken, args.includeBaselines, tally, changes);
      remaining -= taken.length;
      if (taken.length > 0) position = { stage, key: keyOf(stage, taken[taken.length - 1]) };
      if (rows.length > taken.length) {
        hasMore = true;
        break;
      }
    }
    await changes.apply(client, sql, now);
    return Object.freeze({
      ...tally,
      scanned: args.limit - remaining,
      next_cursor: hasMore && position !== null ? encodeEvalCursor([position.stage, ...(position.key ?? [])]) : null,
      has_more: hasMore,
    });
  });
}

async function scan(client: TransactionClient, sql: EvalStoreStatements, stage: Stage, before: number, after: readonly CursorPart[] | null, limit: number): Promise<EvalRow[]> {
  const statements = {
    baselines: [sql.pruneBaselines, sql.pruneBaselinesAfter],
    jobs: [sql.pruneJobs, sql.pruneJobsAfter],
    sets: [sql.pruneSets, sql.pruneSetsAfter],
  } as const;
  const [fromStart, fromKey] = statements[stage];
  const { rows } = after === null ? await client.query(fromStart, [before, limit]) : await client.query(fromKey, [before, limit, ...after]);
  return rows;
}

function keyOf(stage: Stage, row: EvalRow): CursorPart[] {
  if (stage === 'baselines') return [row.scope_app as string, row.eval_set_id as string, row.name as string];
  if (stage === 'jobs') return [rowNumber(row.finished_at_ms), row.job_id as string];
  return [row.scope_app as string, row.eval_set_id as string, row.eval_set_version as string];
}

type Pruner = (client: TransactionClient, sql: EvalStoreStatements, rows: readonly EvalRow[], includeBaselines: boolean, tally: PruneTally, changes: UsageChanges) => Promise<void>;

const PRUNERS: Readonly<Record<Stage, Pruner>> = {
  async baselines(client, sql, rows, _includeBaselines, tally, changes) {
    if (rows.length === 0) return;
    const deleted = await client.query(sql.deleteBaselines, [rows.map((r) => r.scope_app), rows.map((r) => r.eval_set_id), rows.map((r) => r.name)]);
    countBaselines(deleted.rows, tally, changes);
  },
  async jobs(client, sql, rows, includeBaselines, tally, changes) {
    const doomed = rows.filter((row) => includeBaselines || row.baselined !== true);
    if (doomed.length === 0) return;
    const baselined = doomed.filter((row) => row.baselined === true).map((row) => row.job_id);
    if (baselined.length > 0) countBaselines((await client.query(sql.deleteJobBaselines, [baselined])).rows, tally, changes);
    for (const row of (await client.query(sql.deleteJobs, [doomed.map((r) => r.job_id)])).rows) {
      const bytes = rowNumber(row.record_bytes);
      tally.jobs_deleted += 1;
      tally.bytes_reclaimed += bytes;
      changes.add(row.scope_app as string, { jobs: -1, bytes: -bytes });
    }
  },
  async sets(client, sql, rows, _includeBaselines, tally, changes) {
    const unused = rows.filter((row) => row.referenced !== true);
    if (unused.length === 0) return;
    const deleted = await client.query(sql.deleteSets, [unused.map((r) => r.scope_app), unused.map((r) => r.eval_set_id), unused.map((r) => r.eval_set_version)]);
    for (const row of deleted.rows) {
      const bytes = rowNumber(row.content_bytes);
      tally.set_revisions_deleted += 1;
      tally.bytes_reclaimed += bytes;
      changes.add(row.scope_app as string, { sets: -1, bytes: -bytes });
    }
  },
};

function countBaselines(rows: readonly EvalRow[], tally: PruneTally, changes: UsageChanges): void {
  for (const row of rows) {
    tally.baselines_deleted += 1;
    changes.add(row.scope_app as string, { baselines: -1 });
  }
}

/** `[stage]` (the stage's start) or `[stage, ...key]` of the stage's scan order; else `invalid_eval_cursor`. */
function decodePruneCursor(cursor: unknown): PrunePosition {
  return decodeEvalCursor(cursor, (parts): PrunePosition | null => {
    const [stage, ...key] = parts;
    if (typeof stage !== 'string' || !(STAGES as readonly string[]).includes(stage)) return null;
    if (key.length === 0) return { stage: stage as Stage, key: null };
    const valid = stage === 'jobs' ? key.length === 2 && isKeyInteger(key[0]) && typeof key[1] === 'string' && EVAL_JOB_ID.test(key[1]) : key.length === 3 && key.every(isText);
    return valid ? { stage: stage as Stage, key: key as CursorPart[] } : null;
  });
}
