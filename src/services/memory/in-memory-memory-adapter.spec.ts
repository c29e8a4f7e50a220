import { finalOutput, memoryEvent, memorySession } from './testing/memory-fixtures';
import { RuntimeServiceError } from '../runtime-service.errors';
import { IN_MEMORY_MEMORY_CAPABILITIES, InMemoryMemoryAdapter } from './in-memory-memory-adapter';
import { rejected } from '../../shared/testing/rejected';

const A = Object.freeze({ appName: 'app', userId: 'u1' });
const B = Object.freeze({ appName: 'app', userId: 'u2' });

const rejection = (promise: Promise<unknown>): Promise<RuntimeServiceError> => rejected(promise, RuntimeServiceError);

describe('§1.5 capabilities', () => {
  it('reports the in-memory capabilities, frozen', () => {
    const adapter = new InMemoryMemoryAdapter();
    expect(adapter.id).toBe('in_memory_memory');
    expect(adapter.capabilities).toEqual({
      api_version: 1,
      contract_version: 2,
      immutable_versions: false,
      persistence: 'volatile',
      durable: false,
      search: 'token_overlap',
      idempotent_ingestion: true,
      incremental_events: true,
      erasure_epoch_fencing: true,
      quota_scope: 'shared_adapter',
      idle_reclamation: 'not_required_shared_adapter',
    });
    expect(Object.isFrozen(IN_MEMORY_MEMORY_CAPABILITIES)).toBe(true);
  });

  it('refuses a bad adapterConfig at construction', () => {
    expect(() => new InMemoryMemoryAdapter({ maxResults: 0 })).toThrow(expect.objectContaining({ code: 'invalid_runtime_service_component_config' }));
  });
});

describe('§1.3 ingestion', () => {
  it('addSessionToMemory stores the session user messages and final outputs; re-adding is a no-op counted as duplicates', async () => {
    const memory = new InMemoryMemoryAdapter();
    const session = memorySession('app', 'u1', 's-1');
    const events = [memoryEvent('where is my parcel'), memoryEvent('call', { kind: 'model_turn', content: { text: 'x', tool_calls: [] } }), finalOutput('parcel arrives monday')];
    expect(await memory.addSessionToMemory({ session, events })).toEqual({ added: 2, duplicates: 0 });
    expect(await memory.addSessionToMemory({ session, events })).toEqual({ added: 0, duplicates: 2 });
    expect(memory.usage().entries).toBe(2);
    const { memories } = await memory.searchMemory({ ...A, query: 'parcel' });
    expect(memories.map((hit) => hit.author).sort()).toEqual(['helper', 'user']);
  });

  it('addSessionToMemory takes its scope from the session record and refuses a bad one', async () => {
    const memory = new InMemoryMemoryAdapter();
    expect((await rejection(memory.addSessionToMemory({ session: memorySession('', 'u1'), events: [] }))).code).toBe('invalid_memory_scope');
    expect((await rejection(memory.addSessionToMemory({ session: null as never, events: [] }))).details).toEqual({ field: 'session' });
    expect((await rejection(memory.addSessionToMemory({ session: memorySession('app', 'u1', 's-9'), events: [memoryEvent('x')] }))).details).toEqual({ field: 'session_id', index: 0 });
  });

  it('addEvents is incremental and idempotent by event_id, duplicates within a request included', async () => {
    const memory = new InMemoryMemoryAdapter();
    const first = memoryEvent('one');
    const second = memoryEvent('two');
    expect(await memory.addEvents(A, [first], { epoch: 0 })).toEqual({ added: 1, duplicates: 0 });
    expect(await memory.addEvents(A, [first, second, second], { epoch: 0, jobId: 'job-1' })).toEqual({ added: 1, duplicates: 2 });
    // the same event id in another scope is another entry
    expect(await memory.addEvents(B, [first], { epoch: 0 })).toEqual({ added: 1, duplicates: 0 });
    expect(memory.usage()).toMatchObject({ entries: 3 });
  });

  it('refuses bad scopes, ingestions and call options', async () => {
    const memory = new InMemoryMemoryAdapter();
    expect((await rejection(memory.addEvents({ appName: 'app', userId: 'x'.repeat(257) }, [], { epoch: 0 }))).code).toBe('invalid_memory_scope');
    for (const ingestion of [undefined, { epoch: -1 }, { epoch: 1.5 }, { epoch: '1' }, { epoch: 0, jobId: '' }]) {
      expect((await rejection(memory.addEvents(A, [], ingestion as never))).code).toBe('invalid_memory_request');
    }
    expect((await rejection(memory.addEvents(A, [], { epoch: 0 }, { signal: {} as AbortSignal, timeoutMs: 5 }))).details).toEqual({ field: 'options' });
  });

  it('rejects a call whose signal has aborted, with the router code it aborted with', async () => {
    const memory = new InMemoryMemoryAdapter();
    const controller = new AbortController();
    controller.abort(new RuntimeServiceError('timeout'));
    expect((await rejection(memory.addEvents(A, [memoryEvent('x')], { epoch: 0 }, { signal: controller.signal, timeoutMs: 1 }))).code).toBe('timeout');
    const plain = new AbortController();
    plain.abort();
    expect((await rejection(memory.searchMemory({ ...A, query: 'x' }, { signal: plain.signal, timeoutMs: 1 }))).code).toBe('scope_route_caller_unavailable');
    expect(memory.usage().entries).toBe(0);
  });
});

describe('§1.3 search', () => {
  it('ranks by overlap, ties newest first, within the scope only', async () => {
    const memory = new InMemoryMemoryAdapter();
    await memory.addEvents(
      A,
      [memoryEvent('blue whale', { created_at_ms: 10 }), memoryEvent('blue sky', { created_at_ms: 30 }), memoryEvent('whale song blue', { created_at_ms: 20 })],
      { epoch: 0 },
    );
    await memory.addEvents(B, [memoryEvent('blue whale of B', { created_at_ms: 99 })], { epoch: 0 });
    const { memories } = await memory.searchMemory({ ...A, query: 'Blue WHALE' });
    expect(memories.map((hit) => [hit.content, hit.score])).toEqual([
      ['whale song blue', 1],
      ['blue whale', 1],
      ['blue sky', 0.5],
    ]);
    expect(Object.isFrozen(memories) && Object.isFrozen(memories[0])).toBe(true);
  });

  it('returns at most min(limit, maxResults) hits and maxResultBytes of content', async () => {
    const memory = new InMemoryMemoryAdapter({ maxResults: 3, maxResultBytes: 20 });
    await memory.addEvents(A, [1, 2, 3, 4, 5].map((n) => memoryEvent(`note ${n}`, { created_at_ms: n })), { epoch: 0 });
    expect((await memory.searchMemory({ ...A, query: 'note' })).memories.map((hit) => hit.content)).toEqual(['note 5', 'note 4', 'note 3']);
    expect((await memory.searchMemory({ ...A, query: 'note', limit: 2 })).memories).toHaveLength(2);
    expect((await memory.searchMemory({ ...A, query: 'note', limit: 500 })).memories).toHaveLength(3);
    const tight = new InMemoryMemoryAdapter({ maxResultBytes: 13 });
    await tight.addEvents(A, [1, 2, 3].map((n) => memoryEvent(`note ${n}`, { created_at_ms: n })), { epoch: 0 });
    expect((await tight.searchMemory({ ...A, query: 'note' })).memories.map((hit) => hit.content)).toEqual(['note 3', 'note 2']);
  });

  it('refuses bad queries and limits', async () => {
    const memory = new InMemoryMemoryAdapter({ maxQueryBytes: 4 });
    expect((await memory.searchMemory({ ...A, query: 'éé' })).memories).toEqual([]);
    expect((await rejection(memory.searchMemory({ ...A, query: 'ééé' }))).details).toEqual({ field: 'query', limit: 'maxQueryBytes' });
    expect((await rejection(memory.searchMemory({ ...A, query: 42 as never }))).details).toEqual({ field: 'query' });
    expect((await rejection(memory.searchMemory({ ...A, query: 'a\u0000' }))).details).toEqual({ field: 'query' });
    for (const limit of [0, -1, 1.5, '3']) expect((await rejection(memory.searchMemory({ ...A, query: 'a', limit: limit as never }))).details).toEqual({ field: 'limit' });
    expect((await rejection(memory.searchMemory({ appName: 'app', query: 'a' } as never))).code).toBe('invalid_memory_scope');
  });
});

describe('§6.5 erasure and epoch fencing', () => {
  it('eraseMemory raises the epoch, deletes the scope entries only, and fences older ingestion', async () => {
    const memory = new InMemoryMemoryAdapter();
    const kept = memoryEvent('apple pie');
    await memory.addEvents(A, [kept], { epoch: 0 });
    await memory.addEvents(B, [memoryEvent('apple tart')], { epoch: 0 });
    expect(await memory.eraseMemory(A)).toEqual({ epoch: 1 });
    expect((await memory.searchMemory({ ...A, query: 'apple' })).memories).toEqual([]);
    expect((await memory.searchMemory({ ...B, query: 'apple' })).memories).toHaveLength(1);
    const fenced = await rejection(memory.addEvents(A, [kept], { epoch: 0, jobId: 'late' }));
    expect(fenced.code).toBe('memory_epoch_fenced');
    expect(fenced.details).toEqual({ epoch: 0, current_epoch: 1 });
    expect((await memory.searchMemory({ ...A, query: 'apple' })).memories).toEqual([]);
    // the current epoch ingests again, and the erased event may come back under it
    expect(await memory.addEvents(A, [kept], { epoch: 1 })).toEqual({ added: 1, duplicates: 0 });
    expect(await memory.eraseMemory(A)).toEqual({ epoch: 2 });
    expect(await memory.eraseMemory(B)).toEqual({ epoch: 1 });
    expect(memory.usage()).toMatchObject({ entries: 0, bytes: 0 });
  });

  it('addSessionToMemory writes at the current epoch, never fenced', async () => {
    const memory = new InMemoryMemoryAdapter();
    await memory.eraseMemory(A);
    expect(await memory.addSessionToMemory({ session: memorySession('app', 'u1', 's-1'), events: [memoryEvent('after erase')] })).toEqual({ added: 1, duplicates: 0 });
  });
});

describe('§1.3 global quotas', () => {
  it('refuses a request that would pass maxEntries over all scopes, all or nothing', async () => {
    const memory = new InMemoryMemoryAdapter({ maxEntries: 3 });
    await memory.addEvents(A, [memoryEvent('a'), memoryEvent('b')], { epoch: 0 });
    const refused = await rejection(memory.addEvents(B, [memoryEvent('c'), memoryEvent('d')], { epoch: 0 }));
    expect(refused.code).toBe('memory_quota_exceeded');
    expect(refused.details).toEqual({ limit: 'maxEntries' });
    expect(memory.usage().entries).toBe(2);
    expect((await memory.searchMemory({ ...B, query: 'c' })).memories).toEqual([]);
    // duplicates take no room
    expect(await memory.addEvents(B, [memoryEvent('c')], { epoch: 0 })).toEqual({ added: 1, duplicates: 0 });
  });

  it('refuses a request that would pass maxTotalBytes (content + metadata), and frees room on erasure', async () => {
    const probe = new InMemoryMemoryAdapter();
    await probe.addEvents(A, [memoryEvent('x'.repeat(10))], { epoch: 0 });
    const perEntry = probe.usage().bytes;
    const memory = new InMemoryMemoryAdapter({ maxTotalBytes: 2 * perEntry });
    await memory.addEvents(A, [memoryEvent('y'.repeat(10)), memoryEvent('z'.repeat(10))], { epoch: 0 });
    expect((await rejection(memory.addEvents(B, [memoryEvent('w'.repeat(10))], { epoch: 0 }))).details).toEqual({ limit: 'maxTotalBytes' });
    await memory.eraseMemory(A);
    expect(await memory.addEvents(B, [memoryEvent('w'.repeat(10))], { epoch: 0 })).toEqual({ added: 1, duplicates: 0 });
  });
});

describe('close and errors', () => {
  it('drops its data on close and refuses later calls with runtime_service_generation_stale', async () => {
    const memory = new InMemoryMemoryAdapter();
    await memory.addEvents(A, [memoryEvent('x')], { epoch: 0 });
    await memory.close();
    await memory.close();
    expect(memory.usage().entries).toBe(0);
    expect((await rejection(memory.searchMemory({ ...A, query: 'x' }))).code).toBe('runtime_service_generation_stale');
  });

  it('never carries content, queries or scope parts in an error', async () => {
    const secret = 'SECRET-CANARY';
    const memory = new InMemoryMemoryAdapter({ maxContentBytes: 16, maxQueryBytes: 8, maxEntries: 1 });
    const scope = { appName: `${secret}-app`, userId: `${secret}-user` };
    await memory.addEvents(scope, [memoryEvent('short')], { epoch: 0 });
    const errors = await Promise.all([
      rejection(memory.addEvents(scope, [memoryEvent(`${secret} is long content`)], { epoch: 0 })),
      rejection(memory.searchMemory({ ...scope, query: `${secret} query` })),
      rejection(memory.addEvents(scope, [memoryEvent('other')], { epoch: 0 })),
      rejection(memory.addEvents({ appName: secret, userId: '' }, [], { epoch: 0 })),
      memory.eraseMemory(scope).then(() => rejection(memory.addEvents(scope, [memoryEvent(secret)], { epoch: 0 }))),
    ]);
    expect(errors.map((error) => error.code)).toEqual(['memory_content_too_large', 'invalid_memory_request', 'memory_quota_exceeded', 'invalid_memory_scope', 'memory_epoch_fenced']);
    for (const error of errors) expect(`${error.message} ${JSON.stringify(error.details ?? {})}`).not.toContain(secret);
  });
});
