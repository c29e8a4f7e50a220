import fc from 'fast-check';
import { EvalServiceError } from '../eval.errors';
import { decodeEvalCursor, encodeEvalCursor, MAX_EVAL_CURSOR_CHARS } from './eval-cursor';

const anyParts = (parts: readonly unknown[]) => parts;
const invalid = (cursor: unknown) => {
  try {
    decodeEvalCursor(cursor, anyParts);
  } catch (error) {
    return EvalServiceError.isEvalServiceError(error) ? error.code : 'other';
  }
  return 'accepted';
};
const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

describe('eval cursors (spec 05 §2.3)', () => {
  it('are base64url of the canonical JSON array of the key', () => {
    expect(encodeEvalCursor(['set-a', 'v1'])).toBe(b64('["set-a","v1"]'));
    expect(encodeEvalCursor([1700, 'eval-x'])).toBe(b64('[1700,"eval-x"]'));
  });

  it('round-trip every key, and no two keys share a cursor (unlike concatenation)', () => {
    const key = fc.array(fc.oneof(fc.string(), fc.integer()), { minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(key, key, (a, b) => {
        expect(decodeEvalCursor(encodeEvalCursor(a), anyParts)).toEqual(a);
        if (JSON.stringify(a) !== JSON.stringify(b)) expect(encodeEvalCursor(a)).not.toBe(encodeEvalCursor(b));
      }),
    );
    expect(encodeEvalCursor(['a,b', 'c'])).not.toBe(encodeEvalCursor(['a', 'b,c']));
  });

  it.each([
    ['not a string', 42],
    ['empty', ''],
    ['padding', b64('["a"]') + '='],
    ['standard base64 characters', Buffer.from('[">>>?"]').toString('base64')],
    ['not canonical base64url (trailing bits)', b64('["ab"]').slice(0, -1) + 'z'],
    ['not JSON', b64('nope')],
    ['JSON but no array', b64('{"a":1}')],
    ['an array with whitespace', b64('[ "a" ]')],
    ['non-canonical number', b64('[1.0]')],
    ['invalid UTF-8', Buffer.from([0x5b, 0xff, 0x5d]).toString('base64url')],
    ['too long', 'A'.repeat(MAX_EVAL_CURSOR_CHARS + 1)],
  ])('%s is invalid_eval_cursor', (_name, cursor) => {
    expect(invalid(cursor)).toBe('invalid_eval_cursor');
  });

  it('a well-formed cursor of the wrong shape is invalid_eval_cursor too', () => {
    expect(() => decodeEvalCursor(encodeEvalCursor(['a']), () => null)).toThrow(expect.objectContaining({ code: 'invalid_eval_cursor' }));
  });
});
