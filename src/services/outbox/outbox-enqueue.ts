import { types } from 'node:util';
import { canonicalJson } from '../../json/canonical-json';
import { hasEscapedNul } from '../../json/escaped-nul';
import { JsonError } from '../../json/json.errors';
import { measure } from '../../json/measure';
import { optionFailureDetails, readOptions } from '../../shared/options/option-reader';
import { isPlainObject, isSafeIntegerAtLeast } from '../../shared/options/plain-object';
import { sha256Hex } from '../../shared/text/sha256';
import { RuntimeServiceError } from '../runtime-service.errors';
import { checkMemoryScope } from '../service-scope';
import type { MemoryScope } from '../services.types';
import type { OutboxJobPhase } from './outbox.schema';
import { rowNumber, type OutboxContext } from './outbox-context';
import { pruneOnce } from './outbox-prune';
import { lockUsage, scopeUsageKey, UsageChanges } from './outbox-usage';
import { DEFAULT_OUTBOX_ADAPTER_ID, type OutboxEnqueueResult } from './outbox.types';
import { isTokenId } from '../../shared/ids/id-rule';
import { anyValue } from '../config-reader';

/** Largest `baseJobId`, in UTF-8 bytes. */
export const MAX_BASE_JOB_ID_BYTES = 1024;

const UNSTORABLE = /[\u0000\p{Cs}]/u;
/** The scope parts are checked by `checkMemoryScope`, the events one by one after the request. */
const REQUEST_RULES = {
  appName: anyValue,
  userId: anyValue,
  baseJobId: (value: unknown) => typeof value === 'string' && value.length > 0 && !UNSTORABLE.test(value) && Buffer.byteLength(value, 'utf8') <= MAX_BASE_JOB_ID_BYTES,
  adapterId: isTokenId,
  maxAttempts: (value: unknown) => isSafeIntegerAtLeast(value, 1),
  events: (value: unknown) => Array.isArray(value) && !types.isProxy(value) && value.length > 0,
};
const REQUIRED_KEYS = ['baseJobId', 'events'] as const;

/** An enqueue request after validation: the job's row but for its id and epoch. */
interface CheckedJob {
  readonly scope: MemoryScope;
  readonly baseJobId: string;
  readonly adapterId: string;
  readonly maxAttempts: number;
  readonly eventsText: string;
  readonly eventCount: number;
  readonly jobBytes: number;
}

/**
 * The id of a job at an erasure epoch (spec 07 §6.3): `baseJobId` itself at epoch 0, else `memout-`
 * and the first 20 bytes (40 hex digits) of SHA-256 over the canonical JSON of `[baseJobId, epoch]`.
 */
export function epochBoundJobId(baseJobId: string, epoch: number): string {
  return epoch === 0 ? baseJobId : `memout-${sha256Hex(canonicalJson([baseJobId, epoch])).slice(0, 40)}`;
}

/**
 * `enqueue` (spec 07 §6.3), one transaction: the scope's epoch is read, the epoch-bound id
 * computed, and an existing job with that id returned (`created: false`, nothing reserved again).
 * Otherwise the global and then the scope usage row are locked, the caps checked
 * (`memory_outbox_capacity_reached` with `details.limit`) and the job inserted `pending`, due now by
 * the database clock. When only the hard reservation (`active + terminal < maxTerminalRecords`) is
 * full, one prune batch runs and the transaction is tried once more. Any refusal writes nothing.
 */
export async function enqueueJob(context: OutboxContext, request: unknown): Promise<OutboxEnqueueResult> {
  const job = checkJob(request, context);
  try {
    return await enqueueOnce(context, job);
  } catch (error) {
    if (!isReservationFull(error) || (await pruneOnce(context)) === 0) throw error;
  }
  return enqueueOnce(context, job);
}

async function enqueueOnce(context: OutboxContext, job: CheckedJob): Promise<OutboxEnqueueResult> {
  const o = context.options;
  const result = await context.run(async (client, sql) => {
    const [epochRow] = (await client.query(sql.epochOf, [job.scope.appName, job.scope.userId])).rows;
    const epoch = epochRow === undefined ? 0 : rowNumber(epochRow.epoch);
    const jobId = epochBoundJobId(job.baseJobId, epoch);
    const existing = async (): Promise<OutboxEnqueueResult | null> => {
      const [row] = (await client.query(sql.jobById, [jobId])).rows;
      if (row === undefined) return null;
      // at epoch 0 the id is the caller's: another scope's job of that name is not this one
      if (row.app_name !== job.scope.appName || row.user_id !== job.scope.userId) throw new RuntimeServiceError('invalid_memory_request', { field: 'baseJobId' });
      return Object.freeze({ job_id: jobId, phase: row.phase as OutboxJobPhase, created: false });
    };
    const before = await existing();
    if (before !== null) return before;
    const usage = await lockUsage(client, sql, scopeUsageKey(job.scope), true);
    const raced = await existing();
    if (raced !== null) return raced;
    const refuse = (limit: string) => new RuntimeServiceError('memory_outbox_capacity_reached', { limit });
    if (usage.global.activeJobs + 1 > o.maxActiveGlobal) throw refuse('maxActiveGlobal');
    if (usage.global.activeBytes + job.jobBytes > o.maxActiveBytesGlobal) throw refuse('maxActiveBytesGlobal');
    if (usage.scope.activeJobs + 1 > o.maxActivePerScope) throw refuse('maxActivePerScope');
    if (usage.scope.activeBytes + job.jobBytes > o.maxActiveBytesPerScope) throw refuse('maxActiveBytesPerScope');
    if (usage.global.activeJobs + usage.global.terminalJobs >= o.maxTerminalRecords) throw refuse('maxTerminalRecords');
    await client.query(sql.insertJob, [jobId, job.adapterId, job.scope.appName, job.scope.userId, epoch, job.eventsText, job.eventCount, job.jobBytes, job.maxAttempts]);
    const changes = new UsageChanges();
    changes.add(job.scope, { activeJobs: 1, activeBytes: job.jobBytes });
    await changes.apply(client, sql);
    return Object.freeze({ job_id: jobId, phase: 'pending' as const, created: true });
  });
  if (result.created) context.transition(null, 'pending', 0);
  return result;
}

function isReservationFull(error: unknown): boolean {
  return RuntimeServiceError.isRuntimeServiceError(error) && error.code === 'memory_outbox_capacity_reached' && error.details?.limit === 'maxTerminalRecords';
}

/**
 * Validates a request, read with the shared reader (other keys ignored, no getter run): its
 * malformed fields (`invalid_memory_request` with `field` or sorted `fields`, `request` when it is
 * not a plain object), the scope (`invalid_memory_scope`), its missing fields, a `maxAttempts` above
 * the cap (`memory_outbox_runner_max_attempts_exceeded`) and the job's size
 * (`memory_outbox_job_too_large` with `details.limit`: `maxEventsPerJob`, `maxEventBytes` or
 * `maxJobBytes`); an event that is not a JSON object is `{field: 'events'}`.
 */
function checkJob(request: unknown, context: OutboxContext): CheckedJob {
  const o = context.options;
  const invalid = (fields: readonly string[]) => new RuntimeServiceError('invalid_memory_request', optionFailureDetails(fields));
  const read = readOptions(request ?? null, REQUEST_RULES, { name: 'request', unknownKeys: 'ignore' });
  if (!read.ok) throw invalid(read.fields);
  const { appName, userId, maxAttempts, adapterId } = read.values;
  const scope = checkMemoryScope({ appName, userId });
  const missing = REQUIRED_KEYS.filter((key) => read.values[key] === undefined);
  if (missing.length > 0) throw invalid(missing);
  const baseJobId = read.values.baseJobId as string;
  const events = read.values.events as unknown[];
  if (typeof maxAttempts === 'number' && maxAttempts > o.maxAttempts) throw new RuntimeServiceError('memory_outbox_runner_max_attempts_exceeded', { limit: 'maxAttempts' });
  if (events.length > o.maxEventsPerJob) throw new RuntimeServiceError('memory_outbox_job_too_large', { limit: 'maxEventsPerJob' });
  // the canonical JSON of the list is its events, the commas between them and two brackets
  let jobBytes = 1 + events.length;
  for (const event of events) {
    if (!isPlainObject(event)) throw invalid(['events']);
    const measured = measureEvent(event, o.maxEventBytes, invalid);
    if (measured.exceeded) throw new RuntimeServiceError('memory_outbox_job_too_large', { limit: 'maxEventBytes' });
    jobBytes += measured.bytes;
    if (jobBytes > o.maxJobBytes) throw new RuntimeServiceError('memory_outbox_job_too_large', { limit: 'maxJobBytes' });
  }
  const eventsText = canonicalJson(events);
  if (hasEscapedNul(eventsText)) throw invalid(['events']);
  return {
    scope,
    baseJobId,
    adapterId: (adapterId as string | undefined) ?? DEFAULT_OUTBOX_ADAPTER_ID,
    maxAttempts: (maxAttempts as number | undefined) ?? o.defaultMaxAttempts,
    eventsText,
    eventCount: events.length,
    jobBytes,
  };
}

function measureEvent(event: unknown, limit: number, invalid: (fields: readonly string[]) => RuntimeServiceError) {
  try {
    return measure(event, limit);
  } catch (error) {
    if (JsonError.isJsonError(error)) throw invalid(['events']);
    throw error;
  }
}
