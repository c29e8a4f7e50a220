import type { DataSource } from 'typeorm';
import { RuntimeMemory1764900000001, runtimeMemoryDdl } from '../../migrations/1764900000001-runtime-memory';
import { validateSchema } from '../../src/database/schema/schema-validator';
import type { TransactionClient } from '../../src/database/transaction-runner';
import { randomId } from '../../src/shared/ids/random-id';
import { RuntimeServiceError } from '../../src/services/runtime-service.errors';
import { MEMORY_ENTRIES_TABLE, MEMORY_EPOCHS_TABLE, MEMORY_TABLE_SPECS } from '../../src/services/memory/memory.schema';
import { POSTGRES_MEMORY_CAPABILITIES, PostgresMemoryAdapter, type PostgresMemoryAdapterDeps } from '../../src/services/memory/postgres-memory-adapter';
import type { MemoryScope } from '../../src/services/services.types';
import { openDatabaseHarness, useHarness, type DatabaseHarness } from '../support/database-harness';
import { finalOutput, memoryEvent, memorySession } from '../../src/services/memory/testing/memory-fixtures';
import { eventually } from '../support/eventually';
import { rejected } from '../../src/shared/testing/rejected';

const h = useHarness(() => openDatabaseHarness(), 'all');

const adapters: PostgresMemoryAdapter[] = [];
afterEach(async () => {
  await Promise.all(adapters.splice(0).map((adapter) => adapter.close()));
});

let shared: DataSource | undefined;
async function sharedSource(): Promise<DataSource> {
  shared ??= await h().dataSource();
  return shared;
}
afterAll(() => {
  shared = undefined;
});

async function adapter(adapterConfig?: unknown, deps?: PostgresMemoryAdapterDeps, dataSource?: DataSource): Promise<PostgresMemoryAdapter> {
  const created = new PostgresMemoryAdapter(dataSource ?? (await sharedSource()), adapterConfig, deps);
  adapters.push(created);
  return created;
}

/** A scope of its own for each test, in the one database of the suite. */
const newScope = (): MemoryScope => ({ appName: randomId('app-'), userId: randomId('u-') });

const rejection = (promise: Promise<unknown>): Promise<RuntimeServiceError> => rejected(promise, RuntimeServiceError);

function gate(): { readonly open: () => void; readonly opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** Waits until the erasure's hook has paused; fails at once when the erasure ends first. */
async function pausedIn(erasing: Promise<unknown>, paused: Promise<void>): Promise<void> {
  await Promise.race([paused, erasing.then(() => Promise.reject(new Error('the erasure ended before its hook paused')))]);
}

/**
 * An eraser whose erasure pauses inside its transaction (after the epoch row is locked) until
 * `resume()`, and a writer on another DataSource (another instance).
 */
async function pausedEraser() {
  const paused = gate();
  const resume = gate();
  const eraser = await adapter(undefined, {
    onErase: async () => {
      paused.open();
      await resume.opened;
    },
  });
  const writer = await adapter(undefined, undefined, await h().dataSource());
  return {
    writer,
    resume: resume.open,
    /** Starts erasing `scope` and resolves, once the erasure is paused, with the erasure's promise (wrapped, so it is not awaited here). */
    async erase(scope: MemoryScope): Promise<{ readonly erasing: Promise<unknown> }> {
      const erasing = eraser.eraseMemory(scope);
      await pausedIn(erasing, paused.opened);
      return { erasing };
    },
  };
}

/** Some session of this database is waiting for a lock. */
const someoneWaitsForALock = async (harness: DatabaseHarness) =>
  (await harness.sql(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`)).length > 0;

async function epochRow(scope: MemoryScope): Promise<{ epoch: string; updated_at_ms: string } | undefined> {
  const [row] = await h().sql<{ epoch: string; updated_at_ms: string }>(`SELECT epoch, updated_at_ms FROM ${MEMORY_EPOCHS_TABLE} WHERE app_name = $1 AND user_id = $2`, [scope.appName, scope.userId]);
  return row;
}

async function entryCount(scope: MemoryScope): Promise<number> {
  const [row] = await h().sql<{ n: number }>(`SELECT count(*)::int AS n FROM ${MEMORY_ENTRIES_TABLE} WHERE app_name = $1 AND user_id = $2`, [scope.appName, scope.userId]);
  return row.n;
}

describe('§2 the memory tables', () => {
  it('the migration creates what MEMORY_TABLE_SPECS declare, as the shared validator reads the catalog', async () => {
    expect(runtimeMemoryDdl().length).toBeGreaterThan(0);
    const report = await validateSchema(await sharedSource(), MEMORY_TABLE_SPECS);
    expect(report).toEqual({ ok: true, mismatches: [] });
    const names = await h().sql<{ name: string }>(
      `SELECT conname::text AS name FROM pg_constraint WHERE conrelid = ANY ($1::regclass[]) AND contype IN ('p', 'c', 'f', 'u')
       UNION SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = ANY ($1::regclass[]) ORDER BY 1`,
      [[MEMORY_ENTRIES_TABLE, MEMORY_EPOCHS_TABLE]],
    );
    const declared = new Set<string>();
    for (const spec of MEMORY_TABLE_SPECS) {
      declared.add(`${spec.name}_pkey`);
      for (const item of [...(spec.uniques ?? []), ...(spec.indexes ?? []), ...(spec.checks ?? [])]) declared.add(item.name);
    }
    expect(names.map((row) => row.name)).toEqual([...declared].sort());
  });

  it('the validator reports a missing GIN index, a changed generated column and a lost collation', async () => {
    const other = await openDatabaseHarness();
    try {
      await other.sql(`DROP INDEX agent_runtime_memory_entries_search_idx`);
      await other.sql(`ALTER TABLE agent_runtime_memory_entries DROP COLUMN search`);
      await other.sql(`ALTER TABLE agent_runtime_memory_entries ADD COLUMN search tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, content)) STORED`);
      await other.sql(`ALTER TABLE agent_runtime_memory_erasure_epochs ALTER COLUMN user_id TYPE text COLLATE "default"`);
      const report = await validateSchema(await other.dataSource(), MEMORY_TABLE_SPECS);
      const text = JSON.stringify(report.mismatches);
      expect(report.ok).toBe(false);
      expect(text).toContain('agent_runtime_memory_entries_search_idx');
      expect(text).toContain('search');
      expect(text).toContain('user_id');
    } finally {
      await other.close();
    }
  });

  it('down drops both tables and up creates them again', async () => {
    const other = await openDatabaseHarness();
    try {
      const dataSource = await other.dataSource();
      const runner = dataSource.createQueryRunner();
      await new RuntimeMemory1764900000001().down(runner);
      expect(await other.sql(`SELECT to_regclass('${MEMORY_ENTRIES_TABLE}') IS NULL AS gone`)).toEqual([{ gone: true }]);
      await new RuntimeMemory1764900000001().up(runner);
      await runner.release();
      expect((await validateSchema(dataSource, MEMORY_TABLE_SPECS)).ok).toBe(true);
    } finally {
      await other.close();
    }
  });
});

describe('§1.5 capabilities', () => {
  it('reports the Postgres capabilities the outbox requires, frozen', async () => {
    const memory = await adapter();
    expect(memory.id).toBe('postgres_memory');
    expect(memory.capabilities).toEqual({
      api_version: 1,
      contract_version: 2,
      immutable_versions: false,
      persistence: 'postgres',
      durable: true,
      search: 'postgres_full_text',
      idempotent_ingestion: true,
      incremental_events: true,
      erasure_epoch_fencing: true,
      quota_scope: 'exact_scope_shard',
      idle_reclamation: 'lru_on_capacity',
    });
    expect(Object.isFrozen(POSTGRES_MEMORY_CAPABILITIES)).toBe(true);
  });

  it('refuses in-memory quota keys and malformed deps at construction', async () => {
    const dataSource = await sharedSource();
    expect(() => new PostgresMemoryAdapter(dataSource, { maxEntries: 5 })).toThrow(
      expect.objectContaining({ code: 'invalid_runtime_service_component_config', details: { kind: 'memory', reason: 'adapter_unknown_keys', field: 'maxEntries' } }),
    );
    expect(() => new PostgresMemoryAdapter(dataSource, {}, { schema: 'Bad-Schema' })).toThrow(TypeError);
    expect(() => new PostgresMemoryAdapter(dataSource, {}, { onErase: 'x' as never })).toThrow(TypeError);
  });
});

describe('§1.3 ingestion', () => {
  it('addSessionToMemory stores user messages and final outputs as rows; re-adding is a no-op', async () => {
    const memory = await adapter();
    const scope = newScope();
    const session = memorySession(scope.appName, scope.userId, 's-1');
    const user = memoryEvent('where is my parcel', { created_at_ms: 1234, actions: { tag: 'support' } });
    const events = [user, memoryEvent('x', { kind: 'tool_response', content: { call_id: 'c', tool: 't', response: 1 } }), finalOutput('parcel arrives monday')];
    const before = Date.now();
    expect(await memory.addSessionToMemory({ session, events })).toEqual({ added: 2, duplicates: 0 });
    expect(await memory.addSessionToMemory({ session, events })).toEqual({ added: 0, duplicates: 2 });
    const rows = await h().sql<Record<string, unknown>>(
      `SELECT entry_id, event_id, epoch, author, content, metadata, timestamp_ms, created_at_ms, search::text AS search FROM ${MEMORY_ENTRIES_TABLE} WHERE app_name = $1 AND user_id = $2 ORDER BY timestamp_ms`,
      [scope.appName, scope.userId],
    );
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({
      event_id: user.event_id,
      epoch: '0',
      author: 'user',
      content: 'where is my parcel',
      metadata: { session_id: 's-1', invocation_id: 'inv-1', kind: 'user_message', seq: user.seq, actions: { tag: 'support' } },
      timestamp_ms: '1234',
      search: "'is':2 'my':3 'parcel':4 'where':1",
    });
    expect(rows[0].entry_id).toMatch(/^mem-[0-9a-f]{40}$/);
    expect(Number(rows[0].created_at_ms)).toBeGreaterThanOrEqual(before - 5000);
    // the scope's epoch row exists from its first ingestion on
    expect((await epochRow(scope))?.epoch).toBe('0');
  });

  it('addEvents is incremental and idempotent by event_id, also under concurrent delivery from two instances', async () => {
    const one = await adapter();
    const two = await adapter(undefined, undefined, await h().dataSource());
    const scope = newScope();
    const events = Array.from({ length: 20 }, (_, i) => memoryEvent(`note ${i}`));
    expect(await one.addEvents(scope, events.slice(0, 5), { epoch: 0 })).toEqual({ added: 5, duplicates: 0 });
    const results = await Promise.all([one.addEvents(scope, events, { epoch: 0, jobId: 'job-a' }), two.addEvents(scope, events, { epoch: 0, jobId: 'job-a' })]);
    expect(results[0].added + results[1].added).toBe(15);
    expect(results.every((result) => result.added + result.duplicates === 20)).toBe(true);
    expect(await one.addEvents(scope, [events[0], events[0]], { epoch: 0 })).toEqual({ added: 0, duplicates: 2 });
    expect(await entryCount(scope)).toBe(20);
  });

  it('refuses bad requests before touching the database, with the same codes as the in-memory adapter', async () => {
    const memory = await adapter({ maxContentBytes: 8, maxEventsPerRequest: 2 });
    const scope = newScope();
    expect((await rejection(memory.addEvents(scope, [memoryEvent('far too long')], { epoch: 0 }))).code).toBe('memory_content_too_large');
    expect((await rejection(memory.addEvents(scope, [memoryEvent('a'), memoryEvent('b'), memoryEvent('c')], { epoch: 0 }))).details).toEqual({ field: 'events', limit: 'maxEventsPerRequest' });
    expect((await rejection(memory.addEvents(scope, [memoryEvent('a\u0000')], { epoch: 0 }))).details).toEqual({ field: 'content', index: 0 });
    expect((await rejection(memory.addEvents(scope, [], { epoch: -1 }))).details).toEqual({ field: 'epoch' });
    expect((await rejection(memory.addEvents({ appName: 'a', userId: 'b\u0000' }, [], { epoch: 0 }))).code).toBe('invalid_memory_scope');
    expect((await rejection(memory.searchMemory({ ...scope, query: 'x', limit: 0 }))).details).toEqual({ field: 'limit' });
    expect(await epochRow(scope)).toBeUndefined();
  });
});

describe('§1.3 full-text search', () => {
  it('ranks with ts_rank_cd over websearch_to_tsquery(simple), within the scope only', async () => {
    const memory = await adapter();
    const scope = newScope();
    const other = newScope();
    await memory.addEvents(
      scope,
      [
        memoryEvent('the red car is fast', { created_at_ms: 1 }),
        memoryEvent('red car red car red car', { created_at_ms: 2 }),
        memoryEvent('a blue boat', { created_at_ms: 3 }),
        memoryEvent('red paint', { created_at_ms: 4 }),
      ],
      { epoch: 0 },
    );
    await memory.addEvents(other, [memoryEvent('red car of another user')], { epoch: 0 });
    const { memories } = await memory.searchMemory({ ...scope, query: 'Red CAR' });
    expect(memories.map((hit) => hit.content)).toEqual(['red car red car red car', 'the red car is fast']);
    expect(memories[0].score).toBeGreaterThan(memories[1].score);
    expect(typeof memories[0].score).toBe('number');
    expect(memories[0]).toEqual({ id: expect.stringMatching(/^mem-/), content: 'red car red car red car', author: 'user', timestamp_ms: 2, score: memories[0].score });
    expect((await memory.searchMemory({ ...scope, query: 'red -car' })).memories.map((hit) => hit.content)).toEqual(['red paint']);
    expect((await memory.searchMemory({ ...scope, query: 'red or boat' })).memories).toHaveLength(4);
    expect((await memory.searchMemory({ ...scope, query: '"car is"' })).memories.map((hit) => hit.content)).toEqual(['the red car is fast']);
    expect((await memory.searchMemory({ ...scope, query: ' !! ' })).memories).toEqual([]);
    expect(Object.isFrozen(memories)).toBe(true);
  });

  it('breaks ties by timestamp_ms descending, then by entry id', async () => {
    const memory = await adapter();
    const scope = newScope();
    const events = [memoryEvent('kiwi', { created_at_ms: 5 }), memoryEvent('kiwi', { created_at_ms: 9 }), memoryEvent('kiwi', { created_at_ms: 5 }), memoryEvent('kiwi', { created_at_ms: 1 })];
    await memory.addEvents(scope, events, { epoch: 0 });
    const { memories } = await memory.searchMemory({ ...scope, query: 'kiwi' });
    const sameTime = memories.filter((hit) => hit.timestamp_ms === 5).map((hit) => hit.id);
    expect(memories.map((hit) => hit.timestamp_ms)).toEqual([9, 5, 5, 1]);
    expect(sameTime).toEqual([...sameTime].sort());
    expect(new Set(memories.map((hit) => hit.score)).size).toBe(1);
  });

  it('bounds hits by min(limit, maxResults) and maxResultBytes after ranking', async () => {
    const memory = await adapter({ maxResults: 3, maxResultBytes: 120 });
    const scope = newScope();
    // the best hit is the large one: bounding before ranking would return the small ones
    const big = memoryEvent(`mango mango mango kiwi ${'z'.repeat(80)}`, { created_at_ms: 1 });
    const small = [2, 3, 4, 5].map((n) => memoryEvent(`kiwi ${n}`, { created_at_ms: n }));
    await memory.addEvents(scope, [big, ...small], { epoch: 0 });
    const wide = await memory.searchMemory({ ...scope, query: 'kiwi or mango' });
    expect(wide.memories.map((hit) => hit.timestamp_ms)).toEqual([1, 5, 4]);
    expect((await memory.searchMemory({ ...scope, query: 'kiwi or mango', limit: 2 })).memories.map((hit) => hit.timestamp_ms)).toEqual([1, 5]);
    expect((await memory.searchMemory({ ...scope, query: 'kiwi or mango', limit: 100 })).memories).toHaveLength(3);
    const tight = await adapter({ maxResultBytes: 110 });
    // 103 bytes for the big hit, 6 for the next: the third would pass 110
    expect((await tight.searchMemory({ ...scope, query: 'kiwi or mango' })).memories.map((hit) => hit.timestamp_ms)).toEqual([1, 5]);
    const tiny = await adapter({ maxResultBytes: 50 });
    expect((await tiny.searchMemory({ ...scope, query: 'kiwi or mango' })).memories).toEqual([]);
  });
});

describe('§6.5 erasure and epoch fencing', () => {
  it('eraseMemory raises the epoch in the epochs row, deletes the scope entries only, and fences older epochs', async () => {
    const memory = await adapter();
    const scope = newScope();
    const other = newScope();
    const event = memoryEvent('secret plan');
    await memory.addEvents(scope, [event], { epoch: 0 });
    await memory.addEvents(other, [memoryEvent('secret plan too')], { epoch: 0 });
    expect(await memory.eraseMemory(scope)).toEqual({ epoch: 1 });
    expect(await entryCount(scope)).toBe(0);
    expect(await entryCount(other)).toBe(1);
    expect((await epochRow(scope))?.epoch).toBe('1');
    const fenced = await rejection(memory.addEvents(scope, [event], { epoch: 0, jobId: 'late-job' }));
    expect(fenced.code).toBe('memory_epoch_fenced');
    expect(fenced.details).toEqual({ epoch: 0, current_epoch: 1 });
    expect(await entryCount(scope)).toBe(0);
    expect(await memory.addEvents(scope, [event], { epoch: 1 })).toEqual({ added: 1, duplicates: 0 });
    const [row] = await h().sql<{ epoch: string }>(`SELECT epoch FROM ${MEMORY_ENTRIES_TABLE} WHERE app_name = $1 AND user_id = $2`, [scope.appName, scope.userId]);
    expect(row.epoch).toBe('1');
    expect(await memory.eraseMemory(scope)).toEqual({ epoch: 2 });
    // a scope erased before anything was stored starts at 1
    expect(await memory.eraseMemory(newScope())).toEqual({ epoch: 1 });
  });

  it('a late insert of an older epoch waiting behind an erasure never lands (two instances)', async () => {
    const { writer, resume, erase } = await pausedEraser();
    const scope = newScope();
    await writer.addEvents(scope, [memoryEvent('before')], { epoch: 0 });
    const { erasing } = await erase(scope);
    const late = writer.addEvents(scope, [memoryEvent('late delivery')], { epoch: 0 });
    await eventually(() => someoneWaitsForALock(h()));
    resume();
    expect(await erasing).toEqual({ epoch: 1 });
    expect((await rejection(late)).code).toBe('memory_epoch_fenced');
    expect(await entryCount(scope)).toBe(0);
  });

  it('the same holds for a scope without an epochs row: the first erasure and an epoch-0 insert race', async () => {
    const { writer, resume, erase } = await pausedEraser();
    const scope = newScope();
    const { erasing } = await erase(scope);
    const late = writer.addEvents(scope, [memoryEvent('late delivery')], { epoch: 0 });
    await eventually(() => someoneWaitsForALock(h()));
    resume();
    expect(await erasing).toEqual({ epoch: 1 });
    expect((await rejection(late)).code).toBe('memory_epoch_fenced');
    expect(await entryCount(scope)).toBe(0);
  });

  it('an erasure waits for an insert holding the share lock, then deletes what it inserted', async () => {
    const memory = await adapter();
    const scope = newScope();
    await memory.addEvents(scope, [memoryEvent('seed')], { epoch: 0 });
    // a second connection plays an insert in flight: the share lock, then the row, not yet committed
    const inFlight = await h().dataSource();
    const runner = inFlight.createQueryRunner();
    await runner.connect();
    await runner.query('BEGIN');
    await runner.query(`SELECT epoch FROM ${MEMORY_EPOCHS_TABLE} WHERE app_name = $1 AND user_id = $2 FOR SHARE`, [scope.appName, scope.userId]);
    await runner.query(
      `INSERT INTO ${MEMORY_ENTRIES_TABLE} (entry_id, app_name, user_id, event_id, epoch, author, content, metadata, timestamp_ms, created_at_ms) VALUES ('mem-x', $1, $2, 'evt-x', 0, 'user', 'in flight', '{}', 1, 1)`,
      [scope.appName, scope.userId],
    );
    const erasing = memory.eraseMemory(scope);
    await eventually(() => someoneWaitsForALock(h()));
    await runner.query('COMMIT');
    await runner.release();
    expect(await erasing).toEqual({ epoch: 1 });
    expect(await entryCount(scope)).toBe(0);
  });

  it('runs the onErase hook inside the erasure transaction, with the new epoch', async () => {
    const seen: Array<{ inside: string; outside: string | undefined; epoch: number; scope: MemoryScope }> = [];
    const scope = newScope();
    const memory = await adapter(undefined, {
      onErase: async (client: TransactionClient, hookScope, epoch) => {
        const [inside] = (await client.query(`SELECT epoch FROM ${MEMORY_EPOCHS_TABLE} WHERE app_name = $1 AND user_id = $2`, [hookScope.appName, hookScope.userId])).rows;
        const [count] = (await client.query(`SELECT count(*)::int AS n FROM ${MEMORY_ENTRIES_TABLE} WHERE app_name = $1 AND user_id = $2`, [hookScope.appName, hookScope.userId])).rows;
        expect(count.n).toBe(0);
        seen.push({ inside: inside.epoch as string, outside: (await epochRow(hookScope))?.epoch, epoch, scope: hookScope });
      },
    });
    await memory.addEvents(scope, [memoryEvent('x')], { epoch: 0 });
    expect(await memory.eraseMemory(scope)).toEqual({ epoch: 1 });
    // inside: the raised epoch; outside, before the commit: still the old one
    expect(seen).toEqual([{ inside: '1', outside: '0', epoch: 1, scope }]);
  });

  it('a failing onErase hook rolls the whole erasure back', async () => {
    const scope = newScope();
    let fail: 'sql' | 'typed' = 'sql';
    const memory = await adapter(undefined, {
      onErase: async (client) => {
        if (fail === 'typed') throw new RuntimeServiceError('memory_outbox_unavailable');
        await client.query('SELECT * FROM agent_runtime_no_such_table');
      },
    });
    await memory.addEvents(scope, [memoryEvent('survives')], { epoch: 0 });
    const failed = await rejection(memory.eraseMemory(scope));
    expect(failed.code).toBe('memory_shard_adapter_failed');
    expect(failed.details).toEqual({ sqlstate: '42P01' });
    fail = 'typed';
    expect((await rejection(memory.eraseMemory(scope))).code).toBe('memory_outbox_unavailable');
    expect((await epochRow(scope))?.epoch).toBe('0');
    expect(await entryCount(scope)).toBe(1);
    expect(await memory.addEvents(scope, [memoryEvent('still epoch 0')], { epoch: 0 })).toEqual({ added: 1, duplicates: 0 });
  });
});

describe('durability, failures and close', () => {
  it('data and epochs survive a new adapter on a new DataSource of the same database', async () => {
    const scope = newScope();
    const firstSource = await h().dataSource();
    const first = await adapter(undefined, undefined, firstSource);
    await first.addEvents(scope, [memoryEvent('durable fact about llamas')], { epoch: 0 });
    await first.eraseMemory(scope);
    await first.addEvents(scope, [memoryEvent('llamas after erasure')], { epoch: 1 });
    await first.close();
    await firstSource.destroy();
    const second = await adapter(undefined, undefined, await h().dataSource());
    expect((await second.searchMemory({ ...scope, query: 'llamas' })).memories.map((hit) => hit.content)).toEqual(['llamas after erasure']);
    expect((await rejection(second.addEvents(scope, [memoryEvent('old')], { epoch: 0 }))).code).toBe('memory_epoch_fenced');
    expect(await second.eraseMemory(scope)).toEqual({ epoch: 2 });
  });

  it('a database refusal is memory_shard_adapter_failed and an outage runtime_service_store_unavailable, with the SQLSTATE only, never the database text', async () => {
    const secret = 'SECRET-CANARY';
    const wrong = await adapter(undefined, { schema: 'no_such_schema' });
    const failed = await rejection(wrong.addEvents({ appName: secret, userId: secret }, [memoryEvent(secret)], { epoch: 0 }));
    expect(failed.code).toBe('memory_shard_adapter_failed');
    expect(failed.details).toEqual({ sqlstate: '42P01' });
    expect(failed.message).not.toMatch(/relation|no_such_schema|SECRET/);
    const gone = await h().dataSource();
    const orphan = await adapter(undefined, undefined, gone);
    await gone.destroy();
    expect((await rejection(orphan.searchMemory({ appName: 'a', userId: 'b', query: secret }))).details).toEqual({ sqlstate: null });
  });

  it('bounds its statements by the call timeoutMs', async () => {
    const { writer, resume, erase } = await pausedEraser();
    const scope = newScope();
    await writer.addEvents(scope, [memoryEvent('x')], { epoch: 0 });
    const { erasing } = await erase(scope);
    const signal = new AbortController().signal;
    const timedOut = await rejection(writer.addEvents(scope, [memoryEvent('y')], { epoch: 0 }, { signal, timeoutMs: 100 }));
    resume();
    await erasing;
    expect(timedOut.details).toEqual({ sqlstate: '57014' });
  });

  it('rejects an aborted call without a transaction, and close waits for calls in flight then refuses new ones', async () => {
    const memory = await adapter();
    const scope = newScope();
    const controller = new AbortController();
    controller.abort();
    expect((await rejection(memory.addEvents(scope, [memoryEvent('x')], { epoch: 0 }, { signal: controller.signal, timeoutMs: 1000 }))).code).toBe('scope_route_caller_unavailable');
    expect(await epochRow(scope)).toBeUndefined();
    const inFlight = memory.addEvents(scope, [memoryEvent('in flight')], { epoch: 0 });
    await memory.close();
    expect(await inFlight).toEqual({ added: 1, duplicates: 0 });
    expect((await rejection(memory.searchMemory({ ...scope, query: 'x' }))).code).toBe('runtime_service_generation_stale');
  });
});
