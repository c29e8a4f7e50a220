import { canonicalJson } from '../../json/canonical-json';
import { sha256Hex } from '../../shared/text/sha256';
import { RuntimeServiceError } from '../runtime-service.errors';
import { resolveMemoryAdapterConfig } from './memory-adapter-config';
import { memoryEntriesOf, memoryEntryId } from './memory-entries';
import { finalOutput, memoryEvent } from './testing/memory-fixtures';

const SCOPE = Object.freeze({ appName: 'app', userId: 'u1' });
const config = (raw: Record<string, number> = {}) => resolveMemoryAdapterConfig('postgres', raw);

function refusal(events: unknown, raw: Record<string, number> = {}, sessionId?: string): { code: string; details: unknown } {
  try {
    memoryEntriesOf(SCOPE, events, config(raw), sessionId);
  } catch (error) {
    expect(RuntimeServiceError.isRuntimeServiceError(error)).toBe(true);
    return { code: (error as RuntimeServiceError).code, details: (error as RuntimeServiceError).details };
  }
  throw new Error('expected a throw');
}

describe('§1.3 session events become entries', () => {
  it('turns a user_message and a final_output into entries keyed by event_id, with author, timestamp and metadata', () => {
    const user = memoryEvent('what is the invoice total?', { seq: 3, created_at_ms: 1000 });
    const reply = finalOutput('It is 42.', { seq: 4, created_at_ms: 2000, actions: { tag: 'x' } });
    const { entries, repeated } = memoryEntriesOf(SCOPE, [user, reply], config());
    expect(repeated).toBe(0);
    expect(entries).toEqual([
      expect.objectContaining({ eventId: user.event_id, author: 'user', content: 'what is the invoice total?', contentBytes: 26, timestampMs: 1000 }),
      expect.objectContaining({ eventId: reply.event_id, author: 'helper', content: 'It is 42.', timestampMs: 2000 }),
    ]);
    expect(entries[0].metadata).toEqual({ session_id: 's-1', invocation_id: 'inv-1', kind: 'user_message', seq: 3 });
    expect(entries[1].metadata).toEqual({ session_id: 's-1', invocation_id: 'inv-1', kind: 'final_output', seq: 4, actions: { tag: 'x' } });
    expect(entries[1].metadataJson).toBe(canonicalJson(entries[1].metadata));
    expect(entries[1].metadataBytes).toBe(Buffer.byteLength(entries[1].metadataJson));
    expect(Object.isFrozen(entries[1].metadata)).toBe(true);
  });

  it('gives the same entry id in every adapter: mem- + 40 hex of SHA-256 over [appName, userId, eventId]', () => {
    expect(memoryEntryId(SCOPE, 'evt-1')).toBe(`mem-${sha256Hex('["app","u1","evt-1"]').slice(0, 40)}`);
    expect(memoryEntryId({ appName: 'app', userId: 'u2' }, 'evt-1')).not.toBe(memoryEntryId(SCOPE, 'evt-1'));
  });

  it('joins text parts with a line break, skips data parts, and skips events of other kinds or without text', () => {
    const parts = memoryEvent('', { content: { role: 'user', parts: [{ text: 'alpha' }, { data: { n: 1 } }, { text: 'beta' }] } });
    const others = ['model_turn', 'tool_response', 'confirmation_requested', 'policy_audit'].map((kind) => memoryEvent('hidden', { kind: kind as never, content: { text: 'x' } }));
    const blank = memoryEvent('  \n ');
    const dataOnly = memoryEvent('', { content: { role: 'user', parts: [{ data: 'x' }] } });
    const { entries } = memoryEntriesOf(SCOPE, [parts, ...others, blank, dataOnly], config());
    expect(entries.map((entry) => entry.content)).toEqual(['alpha\nbeta']);
    expect(entries[0].contentBytes).toBe(10);
  });

  it('keeps the first of repeated event ids and counts the others', () => {
    const event = memoryEvent('once');
    const { entries, repeated } = memoryEntriesOf(SCOPE, [event, event, { ...event, content: { role: 'user', parts: [{ text: 'twice' }] } }], config());
    expect(entries.map((entry) => entry.content)).toEqual(['once']);
    expect(repeated).toBe(2);
  });

  it('accepts content of exactly maxContentBytes (UTF-8) and refuses one byte more with memory_content_too_large', () => {
    expect(memoryEntriesOf(SCOPE, [memoryEvent('éé')], config({ maxContentBytes: 4 })).entries).toHaveLength(1);
    expect(refusal([memoryEvent('ok'), memoryEvent('éé!')], { maxContentBytes: 4 })).toEqual({ code: 'memory_content_too_large', details: { index: 1, limit: 'maxContentBytes' } });
    // the separator counts
    const twoParts = memoryEvent('', { content: { role: 'user', parts: [{ text: 'ab' }, { text: 'cd' }] } });
    expect(refusal([twoParts], { maxContentBytes: 4 }).code).toBe('memory_content_too_large');
    expect(refusal([memoryEvent('x'.repeat(10_000_000))], { maxContentBytes: 10 }).code).toBe('memory_content_too_large');
  });

  it('bounds metadata by bytes, depth and nodes', () => {
    const base = memoryEvent('hello');
    const baseBytes = memoryEntriesOf(SCOPE, [base], config()).entries[0].metadataBytes;
    expect(memoryEntriesOf(SCOPE, [base], config({ maxMetadataBytes: baseBytes })).entries).toHaveLength(1);
    expect(refusal([base], { maxMetadataBytes: baseBytes - 1 })).toEqual({ code: 'memory_content_too_large', details: { index: 0, limit: 'maxMetadataBytes' } });
    const deep = memoryEvent('hello', { actions: { a: { b: { c: {} } } } });
    expect(memoryEntriesOf(SCOPE, [deep], config({ maxMetadataDepth: 5 })).entries).toHaveLength(1);
    expect(refusal([deep], { maxMetadataDepth: 4 }).details).toEqual({ index: 0, limit: 'maxMetadataDepth' });
    // the metadata object, its four fields, actions, and actions' two members
    const wide = memoryEvent('hello', { actions: { a: 1, b: 2 } });
    expect(memoryEntriesOf(SCOPE, [wide], config({ maxMetadataNodes: 8 })).entries).toHaveLength(1);
    expect(refusal([wide], { maxMetadataNodes: 7 }).details).toEqual({ index: 0, limit: 'maxMetadataNodes' });
  });

  it('refuses more than maxEventsPerRequest events, and events that are not an array', () => {
    const events = [memoryEvent('a'), memoryEvent('b'), memoryEvent('c')];
    expect(memoryEntriesOf(SCOPE, events, config({ maxEventsPerRequest: 3 })).entries).toHaveLength(3);
    expect(refusal(events, { maxEventsPerRequest: 2 })).toEqual({ code: 'invalid_memory_request', details: { field: 'events', limit: 'maxEventsPerRequest' } });
    for (const events of [undefined, 'x', { length: 0 }, new Proxy([], {})]) expect(refusal(events)).toEqual({ code: 'invalid_memory_request', details: { field: 'events' } });
  });

  it.each<[string, Record<string, unknown>]>([
    ['event_id', { event_id: '' }],
    ['event_id', { event_id: 'x'.repeat(257) }],
    ['event_id', { event_id: 'a\u0000b' }],
    ['invocation_id', { invocation_id: 7 }],
    ['session_id', { session_id: undefined }],
    ['seq', { seq: 0 }],
    ['author', { author: '' }],
    ['kind', { kind: 'chat' }],
    ['content', { content: undefined }],
    ['content', { content: 'a plain string' }],
    ['content', { content: { role: 'system', parts: [{ text: 'x' }] } }],
    ['content', { content: { role: 'user', parts: [{ text: 'x', data: 1 }] } }],
    ['content', { content: { role: 'user', parts: [{ text: 5 }] } }],
    ['content', { content: { role: 'user', parts: [{ text: 'nul \u0000 inside' }] } }],
    ['content', { content: { role: 'user', parts: [{ text: 'lone \ud800' }] } }],
    ['actions', { actions: [1] }],
    ['actions', { actions: { s: 'nul \u0000' } }],
    ['actions', { actions: { f: () => 1 } }],
    ['created_at_ms', { created_at_ms: -1 }],
  ])('refuses a malformed event (%s) with invalid_memory_request naming the field and the index', (field, overrides) => {
    expect(refusal([memoryEvent('fine'), { ...memoryEvent('text'), ...overrides }])).toEqual({ code: 'invalid_memory_request', details: { field, index: 1 } });
  });

  it('refuses an event that is not a plain object, and reads no getter', () => {
    expect(refusal([null]).details).toEqual({ field: 'event', index: 0 });
    const getter = jest.fn(() => 'evt-x');
    const event = Object.defineProperty({ ...memoryEvent('x') }, 'event_id', { get: getter, enumerable: true });
    expect(refusal([event]).details).toEqual({ field: 'event_id', index: 0 });
    const events = Object.defineProperty([], 0, { get: getter, enumerable: true });
    expect(refusal(events).details).toEqual({ field: 'event', index: 0 });
    expect(getter).not.toHaveBeenCalled();
  });

  it('with a session id, refuses an event of another session', () => {
    expect(refusal([memoryEvent('x', { session_id: 's-2' })], {}, 's-1')).toEqual({ code: 'invalid_memory_request', details: { field: 'session_id', index: 0 } });
    expect(memoryEntriesOf(SCOPE, [memoryEvent('x')], config(), 's-1').entries).toHaveLength(1);
  });

  it('never puts content into an error', () => {
    const secret = 'SECRET-CANARY-1234';
    const errors = [
      refusal([memoryEvent(`${secret} ${'x'.repeat(100)}`)], { maxContentBytes: 20 }),
      refusal([memoryEvent(secret, { actions: { secret: secret.repeat(100) } })], { maxMetadataBytes: 100 }),
      refusal([{ ...memoryEvent(secret), kind: secret }]),
    ];
    for (const error of errors) expect(JSON.stringify(error)).not.toContain('SECRET');
  });
});
