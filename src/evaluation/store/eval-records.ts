import { deepFreeze } from '../../json/json-copy';
import type { EvalBaselineRecord, EvalJobRecord, EvalPhase, EvalResult, EvalSet, EvalSetRevision, EvalSetSummary } from '../eval.types';

/** A row as node-postgres returns it: `bigint` columns arrive as decimal strings, `jsonb` parsed. */
export type EvalRow = Record<string, unknown>;

/** The job columns every statement returns (never the result). */
export const JOB_COLUMNS =
  'job_id, scope_app, eval_set_id, eval_set_version, agent, metrics, options, metadata, request_bytes, record_bytes, phase, revision, created_at_ms, updated_at_ms, reason, started_at_ms, finished_at_ms';

/** The set revision columns of a listing (never the content). */
export const SET_SUMMARY_COLUMNS = 'eval_set_id, eval_set_version, digest, content_bytes, created_at_ms';

/** The baseline columns of a record. */
export const BASELINE_COLUMNS = 'eval_set_id, name, job_id, created_at_ms, updated_at_ms';

/** A `bigint` (or `integer`) column as a number; the store's values are safe integers. */
export function rowNumber(value: unknown): number {
  return typeof value === 'number' ? value : Number(value);
}

function nullableNumber(value: unknown): number | null {
  return value === null || value === undefined ? null : rowNumber(value);
}

/** A frozen job record of a row selected with {@link JOB_COLUMNS}. */
export function jobRecord(row: EvalRow): EvalJobRecord {
  return deepFreeze({
    job_id: row.job_id as string,
    scope_app: row.scope_app as string,
    eval_set_id: row.eval_set_id as string,
    eval_set_version: row.eval_set_version as string,
    agent: row.agent as string,
    metrics: row.metrics as EvalJobRecord['metrics'],
    options: row.options as EvalJobRecord['options'],
    metadata: row.metadata as EvalJobRecord['metadata'],
    request_bytes: rowNumber(row.request_bytes),
    record_bytes: rowNumber(row.record_bytes),
    phase: row.phase as EvalPhase,
    revision: rowNumber(row.revision),
    created_at_ms: rowNumber(row.created_at_ms),
    updated_at_ms: rowNumber(row.updated_at_ms),
    reason: (row.reason as string | null) ?? null,
    started_at_ms: nullableNumber(row.started_at_ms),
    finished_at_ms: nullableNumber(row.finished_at_ms),
  });
}

/** The frozen result of a row's `result` column, or `null`. */
export function resultOf(row: EvalRow): EvalResult | null {
  return row.result === null || row.result === undefined ? null : deepFreeze(row.result as EvalResult);
}

/** A frozen set summary of a row selected with {@link SET_SUMMARY_COLUMNS}. */
export function setSummary(row: EvalRow): EvalSetSummary {
  return Object.freeze({
    eval_set_id: row.eval_set_id as string,
    eval_set_version: row.eval_set_version as string,
    digest: row.digest as string,
    content_bytes: rowNumber(row.content_bytes),
    created_at_ms: rowNumber(row.created_at_ms),
  });
}

/** A frozen set revision of a row selected with {@link SET_SUMMARY_COLUMNS} and `content`. */
export function setRevision(row: EvalRow): EvalSetRevision {
  return deepFreeze({ ...setSummary(row), content: row.content as EvalSet });
}

/** A frozen baseline record of a row selected with {@link BASELINE_COLUMNS}. */
export function baselineRecord(row: EvalRow): EvalBaselineRecord {
  return Object.freeze({
    eval_set_id: row.eval_set_id as string,
    name: row.name as string,
    job_id: row.job_id as string,
    created_at_ms: rowNumber(row.created_at_ms),
    updated_at_ms: rowNumber(row.updated_at_ms),
  });
}
