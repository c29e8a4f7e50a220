import { isValidId as isLedgerText } from '../shared/ids/id-rule';
import { callOptions, explicitNow, invocationId, jsonDocument, leaseMs, ownerToken } from './ledger-arguments';
import { LedgerError } from './ledger.errors';

function codeOf(fn: () => unknown): unknown {
  try {
    fn();
    return 'ok';
  } catch (error) {
    return LedgerError.isLedgerError(error) ? [error.code, error.details?.field] : error;
  }
}

describe('ledger arguments', () => {
  it('ledger text: 1..256 UTF-8 bytes, well-formed, no U+0000', () => {
    expect(isLedgerText('a')).toBe(true);
    expect(isLedgerText('é'.repeat(128))).toBe(true);
    expect(isLedgerText('€'.repeat(85) + 'a')).toBe(true);
    for (const bad of ['', 'é'.repeat(128) + 'a', '€'.repeat(86), 'a\u0000', '\ud800', 'x\udc00y', 1, null, undefined, ['a']]) {
      expect(isLedgerText(bad)).toBe(false);
    }
    expect(codeOf(() => invocationId('claim', ''))).toEqual(['invalid_claim_arguments', 'id']);
    expect(invocationId('get', '__proto__')).toBe('__proto__');
  });

  it('tokens are UUID strings, lower-cased', () => {
    expect(ownerToken('renew', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11')).toBe('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11');
    for (const bad of ['', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1', '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}', 7, null]) {
      expect(codeOf(() => ownerToken('renew', bad))).toEqual(['invalid_renew_arguments', 'token']);
    }
    expect(codeOf(() => ownerToken('claim', 'x', 'ownerToken'))).toEqual(['invalid_claim_arguments', 'ownerToken']);
  });

  it('leaseMs is a safe integer 1..86,400,000; now a non-negative safe integer keeping now + leaseMs safe', () => {
    expect(leaseMs('claim', 1)).toBe(1);
    expect(leaseMs('claim', 86_400_000)).toBe(86_400_000);
    for (const bad of [0, 86_400_001, 1.5, '5', NaN, Infinity, -1]) expect(codeOf(() => leaseMs('claim', bad))).toEqual(['invalid_claim_arguments', 'leaseMs']);
    expect(explicitNow('create', undefined)).toBeNull();
    expect(explicitNow('create', 0)).toBe(0);
    for (const bad of [-1, 0.5, null, '1', Number.MAX_SAFE_INTEGER + 1]) expect(codeOf(() => explicitNow('create', bad))).toEqual(['invalid_create_arguments', 'now']);
    expect(codeOf(() => explicitNow('claim', Number.MAX_SAFE_INTEGER, 1))).toEqual(['invalid_claim_arguments', 'now']);
  });

  it('call options: own data properties of a plain object with known keys only', () => {
    expect(callOptions('claim', { leaseMs: 5 }, ['leaseMs', 'now'])).toEqual({ leaseMs: 5 });
    expect(callOptions('claim', undefined, ['now'])).toEqual({});
    expect(callOptions('claim', Object.assign(Object.create(null), { now: 1 }), ['now'])).toEqual({ now: 1 });
    const hostile = [null, 5, [], new (class Options {})(), new Proxy({}, {}), { Now: 1 }, { [Symbol('now')]: 1 }, Object.defineProperty({}, 'now', { get: () => 1, enumerable: true })];
    for (const bad of hostile) expect(codeOf(() => callOptions('delete', bad, ['now']))).toEqual(['invalid_delete_arguments', 'options']);
    expect(codeOf(() => callOptions('create', { x: 1 }, ['kind'], 'metadata'))).toEqual(['invalid_create_arguments', 'metadata']);
  });

  it('documents are canonical JSON within maxDocumentBytes, with no U+0000 anywhere', () => {
    expect(jsonDocument('create', 'checkpoint', { b: 1, a: [true, null] }, 100)).toBe('{"a":[true,null],"b":1}');
    expect(jsonDocument('create', 'checkpoint', null, 4)).toBe('null');
    expect(jsonDocument('create', 'checkpoint', 'xx', 4)).toBe('"xx"');
    expect(jsonDocument('create', 'checkpoint', '\\u0000', 100)).toBe('"\\\\u0000"');
    expect(jsonDocument('create', 'checkpoint', { 'a\\': '\\\\u0000' }, 100)).toBe('{"a\\\\":"\\\\\\\\u0000"}');
    const refused = [undefined, 'xxx', () => 1, NaN, 1n, new Date(0), '\u0000', { k: 'a\\\u0000' }, { '\u0000': 1 }, ['\ud800'], Symbol('s')];
    for (const bad of refused) expect(codeOf(() => jsonDocument('checkpoint', 'checkpoint', bad, 4))).toEqual(['invalid_checkpoint_arguments', 'checkpoint']);
    expect(codeOf(() => jsonDocument('finish', 'outcome', { k: '\\\u0000' }, 100))).toEqual(['invalid_finish_arguments', 'outcome']);
  });

  it('an oversized document is refused after work bounded by the limit, not by its size', () => {
    const huge = 'x'.repeat(50_000_000);
    const started = Date.now();
    expect(codeOf(() => jsonDocument('create', 'checkpoint', [huge, huge], 1024))).toEqual(['invalid_create_arguments', 'checkpoint']);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
