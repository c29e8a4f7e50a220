import { hasEscapedNul } from '../../json/escaped-nul';
import { isSafeIntegerAtLeast, isPlainObject } from '../../shared/options/plain-object';
import { EvalServiceError } from '../eval.errors';
import type { EvalJobRecord, EvalScope, PreparedEvalRequest } from '../eval.types';
import { checkEvalScope } from '../eval-scope';
import { jobRecord } from './eval-records';
import { invalidArgument, keyToWrite, MAX_EVAL_KEY_BYTES, MAX_EVAL_VERSION_BYTES } from './eval-store-arguments';
import type { EvalStoreContext } from './eval-store-context';
import type { ResolvedEvalStoreOptions } from './eval-store-options';
import { lockUsage, UsageChanges } from './eval-store-usage';
import { newEvalJobId } from '../eval-scope';

const SHA256_HEX = /^[0-9a-f]{64}$/;
/** `content_bytes`, `request_bytes` and `record_bytes` are `integer` columns. */
const MAX_INTEGER_COLUMN = 2 ** 31 - 1;

/** A prepared request as the statements take it: keys, sizes, and JSON texts for the `jsonb` columns. */
interface CreationRow {
  readonly setId: string;
  readonly setVersion: string;
  readonly digest: string;
  readonly setText: string;
  readonly setBytes: number;
  readonly agent: string;
  readonly metricsText: string;
  readonly optionsText: string;
  readonly metadataText: string;
  readonly requestBytes: number;
}

/**
 * `createEvaluation` (spec 05 §4.3 step 4), one transaction: the set revision is inserted or its
 * digest compared (`eval_set_revision_conflict`), the caps are checked under the usage locks
 * (`eval_set_capacity_reached`, `eval_job_capacity_reached`, `eval_scope_bytes_exceeded`,
 * `eval_store_bytes_exceeded`), and the job is inserted `queued` at revision 0. A set revision or
 * request above `maxRecordBytes` is `eval_record_too_large`. Any failure rolls everything back.
 */
export async function createEvaluation(context: EvalStoreContext, scope: EvalScope, request: PreparedEvalRequest): Promise<EvalJobRecord> {
  const { app } = checkEvalScope(scope);
  const settings = context.settings;
  const row = creationRow(request, settings);
  return context.run(async (client, sql) => {
    const now = context.now();
    const usage = await lockUsage(client, sql, app, now);
    const changes = new UsageChanges();
    const [stored] = (await client.query(sql.setDigest, [app, row.setId, row.setVersion])).rows;
    if (stored !== undefined && stored.digest !== row.digest) throw new EvalServiceError('eval_set_revision_conflict');
    const newSetBytes = stored === undefined ? row.setBytes : 0;
    if (stored === undefined && usage.global.sets + 1 > settings.maxSets) throw new EvalServiceError('eval_set_capacity_reached', { limit: settings.maxSets });
    if (usage.global.jobs + 1 > settings.maxJobs) throw new EvalServiceError('eval_job_capacity_reached', { limit: settings.maxJobs });
    const added = newSetBytes + row.requestBytes;
    if (usage.app.bytes + added > settings.maxScopeBytes) throw new EvalServiceError('eval_scope_bytes_exceeded', { limit: settings.maxScopeBytes });
    if (usage.global.bytes + added > settings.maxTotalBytes) throw new EvalServiceError('eval_store_bytes_exceeded', { limit: settings.maxTotalBytes });
    if (stored === undefined) {
      await client.query(sql.insertSet, [app, row.setId, row.setVersion, row.digest, row.setText, row.setBytes, now]);
      changes.add(app, { sets: 1, bytes: row.setBytes });
    }
    const [job] = (
      await client.query(sql.insertJob, [newEvalJobId(), app, row.setId, row.setVersion, row.agent, row.metricsText, row.optionsText, row.metadataText, row.requestBytes, now])
    ).rows;
    changes.add(app, { jobs: 1, bytes: row.requestBytes });
    await changes.apply(client, sql, now);
    return jobRecord(job);
  });
}

/**
 * The request comes from the preparation pool, already validated; these checks only keep out what
 * Postgres cannot hold (U+0000, oversized integers) or the caps cannot count (`invalid_eval_store_arguments`).
 */
function creationRow(request: PreparedEvalRequest, settings: ResolvedEvalStoreOptions): CreationRow {
  if (!isPlainObject(request) || !isPlainObject(request.set)) throw invalidArgument('request');
  const { set, set_digest: digest, set_bytes: setBytes, request_bytes: requestBytes } = request;
  const isSize = (value: unknown) => isSafeIntegerAtLeast(value, 1) && value <= MAX_INTEGER_COLUMN;
  if (typeof digest !== 'string' || !SHA256_HEX.test(digest) || !isSize(setBytes) || !isSize(requestBytes) || setBytes > requestBytes) {
    throw invalidArgument('request');
  }
  if (setBytes > settings.maxRecordBytes || requestBytes > settings.maxRecordBytes) throw new EvalServiceError('eval_record_too_large', { limit: settings.maxRecordBytes });
  if (!Array.isArray(request.metrics) || !isPlainObject(request.options) || !isPlainObject(request.metadata)) throw invalidArgument('request');
  return {
    setId: keyToWrite(set.id, 'request', MAX_EVAL_KEY_BYTES),
    setVersion: keyToWrite(set.version, 'request', MAX_EVAL_VERSION_BYTES),
    digest,
    setText: jsonText(set),
    setBytes,
    agent: keyToWrite(request.agent, 'request', MAX_EVAL_KEY_BYTES),
    metricsText: jsonText(request.metrics),
    optionsText: jsonText(request.options),
    metadataText: jsonText(request.metadata),
    requestBytes,
  };
}

function jsonText(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined;
  }
  if (typeof text !== 'string' || hasEscapedNul(text)) throw invalidArgument('request');
  return text;
}
