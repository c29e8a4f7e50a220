import type { InvocationLedger } from '../../src/ledger/invocation-ledger';
import type { TerminalPhase } from '../../src/ledger/invocation-record';
import { ledgerError, META, openLedgerHarness, type LedgerHarness } from '../support/ledger-harness';

const TOKEN = '00000000-0000-4000-8000-000000000000';
const cyclic: Record<string, unknown> = {};
cyclic.self = cyclic;
const withGetter = Object.defineProperty({}, 'leaseMs', { get: () => 10, enumerable: true });

type Call = (ledger: InvocationLedger) => Promise<unknown>;

/** Every malformed argument of every operation, with the code and `details.field` it must give. */
const CASES: Array<[string, Call, string, string]> = [
  ['empty id', (l) => l.get(''), 'invalid_get_arguments', 'id'],
  ['id of 257 bytes', (l) => l.get('é'.repeat(128) + 'x'), 'invalid_get_arguments', 'id'],
  ['id with U+0000', (l) => l.claim('a\u0000b', { leaseMs: 10 }), 'invalid_claim_arguments', 'id'],
  ['id with a lone surrogate', (l) => l.delete('\ud800'), 'invalid_delete_arguments', 'id'],
  ['id that is a number', (l) => l.renew(7 as unknown as string, TOKEN, { leaseMs: 10 }), 'invalid_renew_arguments', 'id'],
  ['metadata that is not an object', (l) => l.create('x', null as never, {}), 'invalid_create_arguments', 'metadata'],
  ['metadata with an unknown key', (l) => l.create('x', { ...META, extra: 1 } as never, {}), 'invalid_create_arguments', 'metadata'],
  ['metadata with an empty kind', (l) => l.create('x', { ...META, kind: '' }, {}), 'invalid_create_arguments', 'kind'],
  ['metadata with a 257-byte workflowId', (l) => l.create('x', { ...META, workflowId: 'w'.repeat(257) }, {}), 'invalid_create_arguments', 'workflowId'],
  ['metadata without workflowVersion', (l) => l.create('x', { workflowId: 'w', kind: 'k' } as never, {}), 'invalid_create_arguments', 'workflowVersion'],
  ['checkpoint undefined', (l) => l.create('x', META, undefined), 'invalid_create_arguments', 'checkpoint'],
  ['checkpoint with a function', (l) => l.create('x', META, { f: () => 1 }), 'invalid_create_arguments', 'checkpoint'],
  ['checkpoint with NaN', (l) => l.checkpoint('x', TOKEN, [NaN], { leaseMs: 10 }), 'invalid_checkpoint_arguments', 'checkpoint'],
  ['checkpoint with a cycle', (l) => l.checkpoint('x', TOKEN, cyclic, { leaseMs: 10 }), 'invalid_checkpoint_arguments', 'checkpoint'],
  ['checkpoint with a Date', (l) => l.create('x', META, { at: new Date() }), 'invalid_create_arguments', 'checkpoint'],
  ['checkpoint with U+0000 in a string', (l) => l.create('x', META, { s: 'a\u0000' }), 'invalid_create_arguments', 'checkpoint'],
  ['checkpoint with U+0000 in a key', (l) => l.create('x', META, { 'k\u0000': 1 }), 'invalid_create_arguments', 'checkpoint'],
  ['checkpoint with a lone surrogate', (l) => l.create('x', META, ['\udc00']), 'invalid_create_arguments', 'checkpoint'],
  ['checkpoint over maxDocumentBytes', (l) => l.create('x', META, 'x'.repeat(1023)), 'invalid_create_arguments', 'checkpoint'],
  ['outcome over maxDocumentBytes', (l) => l.finish('x', TOKEN, 'completed', { big: 'x'.repeat(2000) }, undefined), 'invalid_finish_arguments', 'outcome'],
  ['outcome with a bigint', (l) => l.finish('x', TOKEN, 'paused', { n: 1n }, undefined), 'invalid_finish_arguments', 'outcome'],
  ['finish checkpoint with a symbol', (l) => l.finish('x', TOKEN, 'paused', null, [Symbol('s')]), 'invalid_finish_arguments', 'checkpoint'],
  ['token that is not a UUID', (l) => l.renew('x', 'not-a-uuid', { leaseMs: 10 }), 'invalid_renew_arguments', 'token'],
  ['ownerToken that is not a UUID', (l) => l.claim('x', { ownerToken: 'abc', leaseMs: 10 }), 'invalid_claim_arguments', 'ownerToken'],
  ['leaseMs 0', (l) => l.claim('x', { leaseMs: 0 }), 'invalid_claim_arguments', 'leaseMs'],
  ['leaseMs above one day', (l) => l.renew('x', TOKEN, { leaseMs: 86_400_001 }), 'invalid_renew_arguments', 'leaseMs'],
  ['leaseMs 1.5', (l) => l.checkpoint('x', TOKEN, {}, { leaseMs: 1.5 }), 'invalid_checkpoint_arguments', 'leaseMs'],
  ['leaseMs as a string', (l) => l.claim('x', { leaseMs: '10' as unknown as number }), 'invalid_claim_arguments', 'leaseMs'],
  ['missing claim options', (l) => l.claim('x', undefined as never), 'invalid_claim_arguments', 'leaseMs'],
  ['now -1', (l) => l.create('x', META, {}, { now: -1 }), 'invalid_create_arguments', 'now'],
  ['now 1.5', (l) => l.delete('x', { now: 1.5 }), 'invalid_delete_arguments', 'now'],
  ['now + leaseMs beyond 2^53', (l) => l.claim('x', { leaseMs: 10, now: Number.MAX_SAFE_INTEGER - 5 }), 'invalid_claim_arguments', 'now'],
  ['an unknown option key (misspelt now)', (l) => l.finish('x', TOKEN, 'completed', null, undefined, { Now: 5 } as never), 'invalid_finish_arguments', 'options'],
  ['options with a getter', (l) => l.renew('x', TOKEN, withGetter as never), 'invalid_renew_arguments', 'options'],
  ['options that are a proxy', (l) => l.delete('x', new Proxy({}, {}) as never), 'invalid_delete_arguments', 'options'],
  ['id that is an array', (l) => l.get(['x'] as never), 'invalid_get_arguments', 'id'],
];

describe('§5 arguments', () => {
  let harness: LedgerHarness;
  let ledger: InvocationLedger;

  beforeAll(async () => {
    harness = await openLedgerHarness();
    ledger = await harness.ledger({ maxDocumentBytes: 1024 });
  });

  afterAll(async () => {
    await harness.close();
  });

  it.each(CASES)('%s is refused with its operation code and details.field', async (_name, call, code, argument) => {
    const error = await ledgerError(call(ledger), code as never, { field: argument });
    expect(error.message).toBe(`${code} {"field":"${argument}"}`);
  });

  it('malformed input never breaks the ledger: it keeps serving, and nothing was written', async () => {
    await Promise.all(CASES.map(([, call]) => call(ledger).catch(() => undefined)));
    expect(await harness.sql('SELECT id FROM agent_runtime_invocations')).toEqual([]);
    await ledger.create('after', META, { ok: true });
    expect(await ledger.get('after')).toMatchObject({ phase: 'ready' });
  });

  it('a literal backslash-u0000 text, 256-byte ids and documents of exactly maxDocumentBytes are accepted', async () => {
    const id = 'é'.repeat(128);
    // canonical JSON of a string is its text plus two quotes
    const record = await ledger.create(id, { ...META, kind: 'k'.repeat(256) }, '\\u0000' + 'x'.repeat(1024 - 2 - 7));
    expect(record.invocation_id).toBe(id);
    expect(record.checkpoint).toBe('\\u0000' + 'x'.repeat(1015));
  });

  it('finish checks the terminal phase before the documents', async () => {
    await ledgerError(ledger.finish('x', TOKEN, 'bogus' as TerminalPhase, () => 1, undefined), 'invalid_terminal_phase', { phase: 'bogus' });
  });
});
