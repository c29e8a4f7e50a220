import type { JsonObject, JsonValue } from '../json/json.types';
import type { DedicatedClient } from '../database/postgres-pool';

/** Phases of an evaluation job (spec 05 §5). */
export type EvalPhase = 'queued' | 'running' | 'completed' | 'failed' | 'timed_out' | 'cancelled';

/** The phases a job never leaves. */
export const TERMINAL_EVAL_PHASES: readonly EvalPhase[] = Object.freeze(['completed', 'failed', 'timed_out', 'cancelled']);

/** The application a job, set or baseline belongs to; apps never see each other's rows. */
export interface EvalScope {
  /** 1..256 UTF-8 bytes, no U+0000. */
  readonly app: string;
}

/** Metrics a job can score (spec 05 §7; `tool_trajectory_in_order` is this package's partial-credit trajectory). */
export type EvalMetricName = 'response_match' | 'tool_trajectory' | 'tool_trajectory_in_order';

/** How `response_match` compares texts. */
export type ResponseMatchMode = 'rouge_1' | 'exact';

/** A tool call a case expects: same name and canonical-JSON-equal arguments. */
export interface ExpectedToolCall {
  readonly name: string;
  readonly args: JsonObject;
}

/** One case of an eval set. */
export interface EvalCase {
  readonly case_id: string;
  /** A text, or `{role: 'user', parts}` content as the Runner accepts it. */
  readonly input: JsonValue;
  readonly expected_output?: string;
  readonly expected_tool_calls?: readonly ExpectedToolCall[];
}

/** An eval set revision as submitted: `(id, version)` is immutable once stored. */
export interface EvalSet {
  readonly id: string;
  readonly version: string;
  readonly cases: readonly EvalCase[];
}

/** A metric with its defaults applied (`threshold` always set; `match` only for `response_match`). */
export interface EvalMetric {
  readonly name: EvalMetricName;
  readonly threshold: number;
  readonly match?: ResponseMatchMode;
}

/** Options of one job. */
export interface EvalJobOptions {
  /** Per-case bound, 1..`taskTimeoutMs`. */
  readonly case_timeout_ms?: number;
}

/**
 * A request as the preparation pool returns it: validated, redacted, JSON-normalised and frozen,
 * with the set's digest (SHA-256 hex of its canonical JSON) and sizes in canonical JSON bytes.
 */
export interface PreparedEvalRequest {
  readonly set: EvalSet;
  readonly set_digest: string;
  readonly set_bytes: number;
  readonly agent: string;
  readonly metrics: readonly EvalMetric[];
  readonly options: EvalJobOptions;
  readonly metadata: JsonObject;
  /** Canonical JSON bytes of the whole normalised request `{set, agent, metrics, options, metadata}`. */
  readonly request_bytes: number;
}

/** A metric's verdict in a result. */
export interface EvalMetricResult {
  readonly score: number;
  readonly threshold: number;
  readonly passed: boolean;
}

/** One case of a result (spec 05 §7). */
export interface EvalCaseResult {
  readonly case_id: string;
  readonly passed: boolean;
  /** The code the case ended with (`case_timeout`, `run_paused`, a Runner code), else `null`. */
  readonly error: string | null;
  /** Per metric the case's score, `null` where the metric does not apply to the case. */
  readonly scores: Readonly<Record<string, number | null>>;
  readonly actual_output: string;
  readonly actual_tool_calls: readonly ExpectedToolCall[];
  readonly truncated: boolean;
}

/** The result of a completed job. */
export interface EvalResult {
  readonly schema_version: 1;
  readonly passed: boolean;
  readonly metrics: Readonly<Record<string, EvalMetricResult>>;
  readonly cases: readonly EvalCaseResult[];
}

/** A stored job as the store returns it (snake_case, frozen; never the result). */
export interface EvalJobRecord {
  readonly job_id: string;
  readonly scope_app: string;
  readonly eval_set_id: string;
  readonly eval_set_version: string;
  readonly agent: string;
  readonly metrics: readonly EvalMetric[];
  readonly options: EvalJobOptions;
  readonly metadata: JsonObject;
  readonly request_bytes: number;
  readonly record_bytes: number;
  readonly phase: EvalPhase;
  readonly revision: number;
  readonly created_at_ms: number;
  readonly updated_at_ms: number;
  readonly reason: string | null;
  readonly started_at_ms: number | null;
  readonly finished_at_ms: number | null;
}

/** The public form of a job (spec 05 §9): never the result, tokens, signals or request content. */
export interface PublicEvalJob {
  readonly job_id: string;
  readonly scope: EvalScope;
  readonly eval_set_id: string;
  readonly eval_set_version: string;
  readonly agent: string;
  readonly metadata: JsonObject;
  readonly phase: EvalPhase;
  readonly revision: number;
  readonly created_at_ms: number;
  readonly updated_at_ms: number;
  readonly started_at_ms: number | null;
  readonly finished_at_ms: number | null;
  readonly reason: string | null;
}

/** A stored set revision. */
export interface EvalSetRevision {
  readonly eval_set_id: string;
  readonly eval_set_version: string;
  readonly digest: string;
  readonly content: EvalSet;
  readonly content_bytes: number;
  readonly created_at_ms: number;
}

/** A set revision in a listing (no content). */
export type EvalSetSummary = Omit<EvalSetRevision, 'content'>;

/** A named baseline of a set: the completed job it points to. */
export interface EvalBaselineRecord {
  readonly eval_set_id: string;
  readonly name: string;
  readonly job_id: string;
  readonly created_at_ms: number;
  readonly updated_at_ms: number;
}

/** A baseline with the result of its job. */
export interface EvalBaselineWithResult extends EvalBaselineRecord {
  readonly result: EvalResult;
}

/** Paging of a listing: the limit (1..`maxPageLimit`, default `defaultPageLimit`) and an opaque cursor. */
export interface EvalPageOptions {
  readonly limit?: number;
  readonly cursor?: string;
}

/** One page of a listing. */
export interface EvalPage<T> {
  readonly items: readonly T[];
  readonly next_cursor: string | null;
  readonly has_more: boolean;
}

/** Options of `prune` (spec 05 §6). */
export interface EvalPruneOptions {
  /** Delete rows older than this (epoch ms). */
  readonly before: number;
  readonly limit?: number;
  readonly cursor?: string;
  /** Delete baselines too (the baseline first, then its job). @default false */
  readonly includeBaselines?: boolean;
}

/** What one `prune` call did. */
export interface EvalPruneReport {
  readonly baselines_deleted: number;
  readonly jobs_deleted: number;
  readonly set_revisions_deleted: number;
  readonly bytes_reclaimed: number;
  readonly scanned: number;
  readonly next_cursor: string | null;
  readonly has_more: boolean;
}

/** Fields a transition writes besides the phase. */
export interface EvalTransitionFields {
  /** A code string (≤ 4096 bytes); required for `failed`, `timed_out` and `cancelled`. */
  readonly reason?: string;
  /** Only with `completed`. */
  readonly result?: EvalResult;
}

/** Where the backend part of a store identity comes from (spec 05 §2.4). */
export type EvalIdentitySource = 'system_identifier' | 'identity_row';

/**
 * The identity of a store's tables (spec 05 §2.4), as canonical JSON texts of
 * `{backend: {source, id}, database, schema, table_prefix}`: the first is the identity of
 * `identity_source`; with `system_identifier` the second is the identity-row identity, whose lock is
 * taken too. Equal tables give equal identities whatever the operational options.
 */
export interface EvalStoreIdentity {
  readonly identity_source: EvalIdentitySource;
  readonly identities: readonly string[];
}

/**
 * The store an {@link EvalService} owns (spec 05 §2). Every method is one transaction; failures are
 * `EvalServiceError`s (a database outage is `eval_store_unavailable` with the SQLSTATE only).
 * A wrapper (e.g. one that injects failures) delegates to a `PostgresEvalStore`.
 */
export interface EvalStore {
  /** Opens a dedicated (unpooled, keep-alive) connection to the store's database, for the ownership lock. */
  openDedicatedConnection(): Promise<DedicatedClient>;
  /** The identity read through `connection`, or through the pool when omitted (`eval_store_identity_unavailable`). */
  ownershipIdentity(connection?: DedicatedClient): Promise<EvalStoreIdentity>;
  /** Validates the five tables with the shared validator (`schema_mismatch`). */
  assertSchema(connection: DedicatedClient): Promise<void>;
  /** Fails every `queued`/`running` job with `evaluation_service_restarted`; the number of rows. */
  recover(): Promise<number>;
  /** One transaction: the set revision (inserted or digest-checked), caps, the job `queued` revision 0. */
  createEvaluation(scope: EvalScope, request: PreparedEvalRequest): Promise<EvalJobRecord>;
  /** Compare-and-set of the phase (`not_found`, `stale_phase`, `invalid_eval_job_transition`). */
  transition(scope: EvalScope, jobId: string, expected: readonly EvalPhase[], to: EvalPhase, fields?: EvalTransitionFields): Promise<EvalJobRecord>;
  getJob(scope: EvalScope, jobId: string): Promise<EvalJobRecord>;
  /** The job and, when completed, its result. */
  getResult(scope: EvalScope, jobId: string): Promise<{ readonly job: EvalJobRecord; readonly result: EvalResult | null }>;
  listJobs(scope: EvalScope, options?: EvalPageOptions): Promise<EvalPage<EvalJobRecord>>;
  getSet(scope: EvalScope, evalSetId: string, version: string): Promise<EvalSetRevision>;
  listSets(scope: EvalScope, options?: EvalPageOptions): Promise<EvalPage<EvalSetSummary>>;
  putBaseline(scope: EvalScope, baseline: { readonly evalSetId: string; readonly name: string; readonly jobId: string }): Promise<EvalBaselineRecord>;
  getBaseline(scope: EvalScope, evalSetId: string, name: string): Promise<EvalBaselineWithResult>;
  prune(options: EvalPruneOptions): Promise<EvalPruneReport>;
}

/** A job as an executor receives it. */
export interface EvalExecution {
  readonly job_id: string;
  readonly scope: EvalScope;
  readonly agent: string;
  readonly set: EvalSet;
  readonly metrics: readonly EvalMetric[];
  readonly options: EvalJobOptions;
}

/** What an executor's task settles with (spec 05 §5.1). */
export type EvalTaskOutcome = { readonly status: 'completed'; readonly result: EvalResult } | { readonly status: 'error'; readonly reason: string };

/**
 * Runs jobs (the `worker` option). `start` is called once per job when it becomes `running`; it must
 * return at once with a promise of the outcome and stop when `signal` aborts. A synchronous throw
 * (or a return that is not a promise) fails the admission of the job.
 */
export interface EvalExecutor {
  start(job: EvalExecution, signal: AbortSignal, config?: JsonValue): Promise<EvalTaskOutcome>;
}
