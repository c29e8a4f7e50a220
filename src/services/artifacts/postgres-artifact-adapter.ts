import type { DataSource } from 'typeorm';
import { AdapterGate } from '../adapter-gate';
import { poolOf } from '../../database/postgres-pool';
import { isPostgresIdentifier } from '../../database/schema/table-spec';
import { runTransaction, type TransactionClient } from '../../database/transaction-runner';
import type { JsonObject } from '../../json/json.types';
import { systemClock, type Clock } from '../../shared/time/clock';
import { retry } from '../../shared/time/retry';
import { RuntimeServiceError } from '../runtime-service.errors';
import { checkArtifactScope } from '../service-scope';
import type { AdapterCallOptions, ArtifactFileRequest, ArtifactRecord, ArtifactScope, ArtifactVersionInfo, PageRequest, SaveArtifactRequest } from '../services.types';
import { resolveArtifactAdapterConfig, type PostgresArtifactConfig } from './artifact-adapter-config';
import type { ArtifactAdapter, ArtifactKeyPage, ArtifactVersionPage, DeleteArtifactRequest, LoadArtifactRequest } from './artifact-adapter.types';
import { POSTGRES_ARTIFACT_CAPABILITIES } from './artifact-capabilities';
import { keyListing, pageOf, versionListing } from './artifact-paging';
import { artifactRecord, versionInfo } from './artifact-records';
import { checkDeleteRequest, checkFileRequest, checkLoadRequest, checkSaveRequest, ownedBytes } from './artifact-request';
import { artifactStoreFailure, closedAdapter, corruptRecord, throwIfAborted } from './artifact-store-failure';
import { artifactStatements, fileValues, type ArtifactStatements } from './postgres-artifact-sql';

/** Options of a {@link PostgresArtifactAdapter}. */
export interface PostgresArtifactAdapterOptions {
  /** The component's `adapterConfig` (spec 07 §2), checked by `resolveArtifactAdapterConfig('postgres', …)`. @default {} */
  readonly adapterConfig?: unknown;
  /** Source of `created_at_ms` (`wallNow()`). @default systemClock */
  readonly clock?: Clock;
  /** Postgres schema of both tables (`^[a-z_][a-z0-9_]{0,62}$`). @default the connection's current_schema() */
  readonly schema?: string;
}

/** Attempts of a save whose version insert meets a unique violation (a writer that did not take the head lock). */
const SAVE_ATTEMPTS = 3;
const UNIQUE_VIOLATION = '23505';

/**
 * The durable profile's artifact adapter without `artifactRoot` (spec 07 §2): versions as bytea rows
 * of `agent_runtime_artifacts`, heads in `agent_runtime_artifact_heads` (migration
 * `RuntimeArtifacts1764900000000`; the bundle validates both with {@link ARTIFACT_TABLE_SPECS}).
 * Every operation is one transaction bounded by the call's time (`statement_timeout`). A save takes
 * its version under the head row's lock in its own transaction, so any number of adapters on one
 * database give distinct, gap-free versions; nothing is cached per process. A database failure
 * carries the SQLSTATE only: `runtime_service_store_unavailable` for an outage,
 * `artifact_shard_adapter_failed` for anything else the database refuses.
 *
 * @example
 * const artifacts = new PostgresArtifactAdapter(dataSource, { adapterConfig: { maxArtifactBytes: 4 * 1024 * 1024 } });
 * const version = await artifacts.saveArtifact({ appName: 'a', userId: 'u', filename: 'notes.txt', artifact: { data, mimeType: 'text/plain' } });
 */
export class PostgresArtifactAdapter implements ArtifactAdapter {
  readonly id = 'postgres_artifact';
  readonly capabilities = POSTGRES_ARTIFACT_CAPABILITIES;
  /** The resolved `adapterConfig` (frozen). */
  readonly config: PostgresArtifactConfig;
  readonly #dataSource: DataSource;
  readonly #clock: Clock;
  readonly #schema: string | null;
  #statements: ArtifactStatements | null = null;
  readonly #gate = new AdapterGate(closedAdapter);

  /** Throws `invalid_runtime_service_component_config` for a bad `adapterConfig`, a `TypeError` for a malformed `schema`. */
  constructor(dataSource: DataSource, options: PostgresArtifactAdapterOptions = {}) {
    this.config = resolveArtifactAdapterConfig('postgres', options.adapterConfig);
    if (options.schema !== undefined && !isPostgresIdentifier(options.schema)) throw new TypeError('schema must match ^[a-z_][a-z0-9_]{0,62}$');
    this.#dataSource = dataSource;
    this.#clock = options.clock ?? systemClock;
    this.#schema = options.schema ?? null;
  }

  saveArtifact(request: SaveArtifactRequest, call?: AdapterCallOptions): Promise<number> {
    return this.#operate(call, async () => {
      const save = checkSaveRequest(request, this.config.maxArtifactBytes);
      const file = fileValues(save.scope, save.filename);
      const attempt = () =>
        this.#transaction(call, async (client, sql) => {
          await client.query(sql.ensureHead, file);
          const [head] = (await client.query(sql.lockHead, file)).rows;
          const version = Number(head?.version);
          const values = [...file, version, Buffer.from(save.data.buffer, save.data.byteOffset, save.data.byteLength), save.data.byteLength, save.sha256, save.mimeType, save.metadataText, this.#now()];
          const [advanced] = (await client.query(sql.insertVersion, values)).rows;
          if (Number(advanced?.next_version) !== version + 1) throw corruptRecord();
          return version;
        });
      return retry(attempt, { attempts: SAVE_ATTEMPTS, delayMs: 0, retryable: isUniqueViolation, signal: call?.signal }, systemClock);
    });
  }

  loadArtifact(request: LoadArtifactRequest, call?: AdapterCallOptions): Promise<ArtifactRecord | undefined> {
    return this.#operate(call, async () => {
      const load = checkLoadRequest(request);
      const file = fileValues(load.scope, load.filename);
      const [row] = await this.#transaction(call, async (client, sql) =>
        load.version === null ? (await client.query(sql.loadLatest, file)).rows : (await client.query(sql.loadVersion, [...file, load.version])).rows,
      );
      if (row === undefined) return undefined;
      if (!(row.data instanceof Uint8Array)) throw corruptRecord();
      return artifactRecord(infoOf(row), ownedBytes(row.data));
    });
  }

  listArtifactKeys(scope: ArtifactScope, page?: PageRequest, call?: AdapterCallOptions): Promise<ArtifactKeyPage> {
    return this.#operate(call, async () => {
      const checked = checkArtifactScope(scope);
      const listing = keyListing(page, this.config);
      const values = [...fileValues(checked, listing.after ?? ''), listing.limit + 1];
      const rows = await this.#transaction(call, async (client, sql) => (await client.query(sql.listKeys, values)).rows);
      const result = pageOf(
        rows.map((row) => row.filename as string),
        listing,
        (key) => key,
        'keys',
      );
      return Object.freeze({ keys: result.items, next_cursor: result.next_cursor, has_more: result.has_more });
    });
  }

  listVersions(request: ArtifactFileRequest, page?: PageRequest, call?: AdapterCallOptions): Promise<ArtifactVersionPage> {
    return this.#operate(call, async () => {
      const file = checkFileRequest(request);
      const listing = versionListing(page, this.config);
      const values = [...fileValues(file.scope, file.filename), listing.after ?? 0, listing.limit + 1];
      const rows = await this.#transaction(call, async (client, sql) => (await client.query(sql.listVersions, values)).rows);
      const result = pageOf(rows.map(infoOf), listing, (info) => info.version, 'versions');
      return Object.freeze({ versions: result.items, next_cursor: result.next_cursor, has_more: result.has_more });
    });
  }

  deleteArtifact(request: DeleteArtifactRequest, call?: AdapterCallOptions): Promise<number> {
    return this.#operate(call, async () => {
      const deletion = checkDeleteRequest(request);
      const file = fileValues(deletion.scope, deletion.filename);
      const [row] = await this.#transaction(call, async (client, sql) => {
        if (deletion.version === null) return (await client.query(sql.deleteAll, file)).rows;
        if (deletion.version === 'latest') return (await client.query(sql.deleteLatest, file)).rows;
        return (await client.query(sql.deleteVersion, [...file, deletion.version])).rows;
      });
      return Number(row?.count ?? 0);
    });
  }

  /** Refuses new operations (`runtime_service_generation_stale`) and waits for those in flight. The DataSource stays open. Idempotent. */
  close(): Promise<void> {
    return this.#gate.close();
  }

  #operate<T>(call: AdapterCallOptions | undefined, work: () => Promise<T>): Promise<T> {
    return this.#gate.run(async () => {
      throwIfAborted(call);
      return work();
    });
  }

  /** One transaction on the DataSource's pool, each statement bounded by the call's remaining time. */
  async #transaction<T>(call: AdapterCallOptions | undefined, work: (client: TransactionClient, sql: ArtifactStatements) => Promise<T>): Promise<T> {
    throwIfAborted(call);
    const pool = poolOf(this.#dataSource);
    if (pool === null) throw new RuntimeServiceError('runtime_service_store_unavailable', { sqlstate: null });
    const timeout = call?.timeoutMs;
    const statementTimeoutMs = typeof timeout === 'number' && Number.isFinite(timeout) ? Math.max(1, Math.ceil(timeout)) : undefined;
    return runTransaction(pool, async (client) => work(client, await this.#statementsOn(client)), artifactStoreFailure, { statementTimeoutMs });
  }

  async #statementsOn(client: TransactionClient): Promise<ArtifactStatements> {
    if (this.#statements !== null) return this.#statements;
    let schema = this.#schema;
    if (schema === null) {
      const [row] = (await client.query('SELECT current_schema() AS schema')).rows;
      schema = typeof row?.schema === 'string' ? row.schema : null;
      if (schema === null) throw new RuntimeServiceError('runtime_service_store_unavailable', { sqlstate: null });
    }
    this.#statements = artifactStatements(schema);
    return this.#statements;
  }

  #now(): number {
    return Math.floor(this.#clock.wallNow());
  }
}

function isUniqueViolation(error: unknown): boolean {
  return RuntimeServiceError.isRuntimeServiceError(error) && error.details?.sqlstate === UNIQUE_VIOLATION;
}

/** The metadata of a row: `bigint` columns arrive as decimal strings, `jsonb` parsed. */
function infoOf(row: Record<string, unknown>): ArtifactVersionInfo {
  return versionInfo({
    version: Number(row.version),
    mime_type: row.mime_type as string,
    size_bytes: Number(row.size_bytes),
    sha256: row.sha256 as string,
    custom_metadata: row.custom_metadata as JsonObject,
    created_at_ms: Number(row.created_at_ms),
  });
}
