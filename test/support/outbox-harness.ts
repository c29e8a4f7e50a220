import type { DataSource } from 'typeorm';
import { deepFreeze } from '../../src/json';
import type { SessionEvent } from '../../src/runner/session.types';
import { RuntimeServiceError } from '../../src/services/runtime-service.errors';
import type { AdapterCallOptions, IngestionCount, MemoryScope } from '../../src/services/services.types';
import { PostgresMemoryOutbox, type MemoryOutboxDependencies } from '../../src/services/outbox/memory-outbox';
import type { MemoryOutboxOptions } from '../../src/services/outbox/outbox-options';
import { scopeUsageKey } from '../../src/services/outbox/outbox-usage';
import type { OutboxDeliveryTarget, OutboxJobTelemetry } from '../../src/services/outbox/outbox.types';
import { TelemetryEvents } from '../../src/telemetry/telemetry-events';
import { randomId } from '../../src/shared/ids/random-id';
import { openDatabaseHarness, type DatabaseHarness } from './database-harness';

/** Fast defaults for tests: a short poll, everything else as the spec says unless a test changes it. */
export const FAST: MemoryOutboxOptions = Object.freeze({ pollIntervalMs: 20, registry: { hydrationTimeoutMs: 2000 }, startupTimeoutMs: 2000 });

/** An adapter id no test registers: jobs of it stay pending. */
export const PARKED = 'parked-adapter';

/** A stored-looking session event of `scope`, `bytes` of text long at least. */
export function sessionEvent(text = 'hello', overrides: Partial<SessionEvent> = {}): SessionEvent {
  return deepFreeze({
    event_id: randomId('evt-'),
    invocation_id: 'inv-1',
    author: 'user',
    kind: 'user_message',
    content: { role: 'user', parts: [{ text }] },
    session_id: 'session-1',
    seq: 1,
    created_at_ms: 1_700_000_000_000,
    ...overrides,
  });
}

/** One delivery as the target saw it. */
export interface DeliveryCall {
  readonly scope: MemoryScope;
  readonly events: readonly SessionEvent[];
  readonly epoch: number;
  readonly jobId: string | undefined;
  readonly call: AdapterCallOptions;
}

/**
 * A delivery target that records every call and detects overlapping deliveries of one job (also
 * across outbox instances sharing it). `behaviour` decides each answer; by default it succeeds.
 */
export class RecordingTarget implements OutboxDeliveryTarget {
  readonly calls: DeliveryCall[] = [];
  overlaps = 0;

  constructor(
    public behaviour: (call: DeliveryCall, index: number) => Promise<IngestionCount> = async (c) => ({ added: c.events.length, duplicates: 0 }),
    /** Jobs being delivered; pass one set to several targets to detect overlaps between them. */
    readonly active: Set<string> = new Set<string>(),
    /** Counts overlaps seen by every target sharing it. */
    readonly overlapCount: { value: number } = { value: 0 },
  ) {}

  async addEvents(scope: MemoryScope, events: readonly SessionEvent[], ingestion: { epoch: number; jobId?: string }, call: AdapterCallOptions): Promise<IngestionCount> {
    const recorded: DeliveryCall = { scope, events, epoch: ingestion.epoch, jobId: ingestion.jobId, call };
    const index = this.calls.push(recorded) - 1;
    const key = ingestion.jobId ?? '';
    if (this.active.has(key)) {
      this.overlaps += 1;
      this.overlapCount.value += 1;
    }
    this.active.add(key);
    try {
      return await this.behaviour(recorded, index);
    } finally {
      this.active.delete(key);
    }
  }

  deliveriesOf(jobId: string): number {
    return this.calls.filter((c) => c.jobId === jobId).length;
  }
}

/** A target answer that fails with `code`. */
export const failWith = (code: 'memory_epoch_fenced' | 'memory_shard_adapter_failed' | 'timeout') => async (): Promise<IngestionCount> => {
  throw new RuntimeServiceError(code);
};

/** A target answer that never settles (and ignores its signal). */
export const hang = (): Promise<IngestionCount> => new Promise<IngestionCount>(() => undefined);

/** A row of the jobs table as tests read it. */
export interface JobRow {
  job_id: string;
  adapter_id: string;
  app_name: string;
  user_id: string;
  epoch: number;
  phase: string;
  event_count: number;
  job_bytes: number;
  attempts: number;
  max_attempts: number;
  due_at_ms: number;
  lease_token: string | null;
  lease_until_ms: number;
  last_error: string | null;
  created_at_ms: number;
  updated_at_ms: number;
  finished_at_ms: number | null;
}

/** A database with outboxes on it, each collecting its telemetry; everything closes with the harness. */
export interface OutboxHarness {
  readonly db: DatabaseHarness;
  /** The harness's first DataSource. */
  dataSource(): Promise<DataSource>;
  /** A new outbox (not started) on `dataSource` (default the first). */
  outbox(options?: MemoryOutboxOptions, deps?: MemoryOutboxDependencies, dataSource?: DataSource): Promise<PostgresMemoryOutbox>;
  /** A started outbox delivering `adapterId` (default the durable one) to `target`. */
  started(target: OutboxDeliveryTarget, options?: MemoryOutboxOptions, deps?: MemoryOutboxDependencies, dataSource?: DataSource, adapterId?: string): Promise<PostgresMemoryOutbox>;
  /** Telemetry of every outbox of the harness, in order. */
  readonly telemetry: OutboxJobTelemetry[];
  jobs(): Promise<JobRow[]>;
  job(jobId: string): Promise<JobRow | undefined>;
  usage(): Promise<Array<{ usage_key: string; active_jobs: number; active_bytes: number; terminal_jobs: number }>>;
  /** The usage rows the jobs table implies (global, and a row per scope with jobs). */
  expectedUsage(): Promise<Array<{ usage_key: string; active_jobs: number; active_bytes: number; terminal_jobs: number }>>;
  close(): Promise<void>;
}

const numeric = ['epoch', 'event_count', 'job_bytes', 'attempts', 'max_attempts', 'due_at_ms', 'lease_until_ms', 'created_at_ms', 'updated_at_ms', 'finished_at_ms'] as const;

function jobRow(row: Record<string, unknown>): JobRow {
  const out = { ...row } as Record<string, unknown>;
  for (const key of numeric) if (out[key] !== null && out[key] !== undefined) out[key] = Number(out[key]);
  return out as unknown as JobRow;
}

/** Opens a fresh migrated database for outbox tests. */
export async function openOutboxHarness(): Promise<OutboxHarness> {
  const db = await openDatabaseHarness();
  let first: DataSource | undefined;
  const telemetry: OutboxJobTelemetry[] = [];
  const sink = { emit: (event: string, payload: object) => event === TelemetryEvents.memoryOutboxJob && telemetry.push(payload as OutboxJobTelemetry) };
  const dataSource = async () => (first ??= await db.dataSource());
  const outbox = async (options: MemoryOutboxOptions = {}, deps: MemoryOutboxDependencies = {}, source?: DataSource) => {
    const created = new PostgresMemoryOutbox(source ?? (await dataSource()), { ...FAST, ...options }, { events: sink, ...deps });
    db.track(() => created.stop());
    return created;
  };
  const jobs = async () => (await db.sql('SELECT * FROM agent_runtime_memory_outbox_jobs ORDER BY created_at_ms, job_id')).map(jobRow);
  return {
    db,
    dataSource,
    outbox,
    async started(target, options = {}, deps = {}, source, adapterId = 'durable-local-memory-v1') {
      const created = await outbox(options, deps, source);
      created.registerAdapter(adapterId, target);
      await created.start();
      return created;
    },
    telemetry,
    jobs,
    async job(jobId) {
      const [row] = await db.sql('SELECT * FROM agent_runtime_memory_outbox_jobs WHERE job_id = $1', [jobId]);
      return row === undefined ? undefined : jobRow(row);
    },
    async usage() {
      const rows = await db.sql<{ usage_key: string; active_jobs: number; active_bytes: string; terminal_jobs: number }>(
        `SELECT usage_key, active_jobs, active_bytes, terminal_jobs FROM agent_runtime_memory_outbox_usage WHERE usage_key <> 'health' ORDER BY usage_key`,
      );
      return rows.map((row) => ({ ...row, active_bytes: Number(row.active_bytes) }));
    },
    async expectedUsage() {
      const totals = new Map<string, { usage_key: string; active_jobs: number; active_bytes: number; terminal_jobs: number }>();
      const add = (key: string, row: JobRow) => {
        const entry = totals.get(key) ?? { usage_key: key, active_jobs: 0, active_bytes: 0, terminal_jobs: 0 };
        if (row.finished_at_ms === null) {
          entry.active_jobs += 1;
          entry.active_bytes += row.job_bytes;
        } else {
          entry.terminal_jobs += 1;
        }
        totals.set(key, entry);
      };
      totals.set('global', { usage_key: 'global', active_jobs: 0, active_bytes: 0, terminal_jobs: 0 });
      for (const row of await jobs()) {
        add('global', row);
        add(scopeUsageKey({ appName: row.app_name, userId: row.user_id }), row);
      }
      return [...totals.values()].sort((a, b) => (a.usage_key < b.usage_key ? -1 : a.usage_key > b.usage_key ? 1 : 0));
    },
    close: () => db.close(),
  };
}
