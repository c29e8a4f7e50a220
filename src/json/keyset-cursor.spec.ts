import fc from 'fast-check';
import { decodeKeysetCursor, encodeKeysetCursor } from './keyset-cursor';

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

describe('keyset cursors', () => {
  it('are base64url of the canonical JSON array of the key', () => {
    expect(encodeKeysetCursor(['k', 'report.txt'])).toBe(b64('["k","report.txt"]'));
    expect(encodeKeysetCursor(['v', 7])).toBe(b64('["v",7]'));
  });

  it('round-trip every key, and no two keys share a cursor', () => {
    const key = fc.array(fc.oneof(fc.string(), fc.integer()), { minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(key, key, (a, b) => {
        expect(decodeKeysetCursor(encodeKeysetCursor(a), 1 << 20)).toEqual(a);
        if (JSON.stringify(a) !== JSON.stringify(b)) expect(encodeKeysetCursor(a)).not.toBe(encodeKeysetCursor(b));
      }),
    );
  });

  it('accept only what the encoder produces', () => {
    const refused = [
      undefined,
      42,
      '',
      'not base64!',
      `${b64('["k","a"]')}=`,
      b64('{"k":1}'),
      b64('[ "k" ]'),
      b64('["k",1.0]'),
      b64('[1,'),
      Buffer.from([0x5b, 0xff, 0x5d]).toString('base64url'),
    ];
    for (const cursor of refused) expect(decodeKeysetCursor(cursor, 100)).toBeNull();
    // a non-canonical trailing character of base64url decodes to the same bytes: refused
    const canonical = b64('["k"]');
    const last = canonical.at(-1) as string;
    const sibling = canonical.slice(0, -1) + String.fromCharCode(last.charCodeAt(0) + 1);
    expect(Buffer.from(sibling, 'base64url').equals(Buffer.from(canonical, 'base64url'))).toBe(true);
    expect(decodeKeysetCursor(sibling, 100)).toBeNull();
  });

  it('refuse a cursor longer than the bound', () => {
    const cursor = encodeKeysetCursor(['k', 'x'.repeat(100)]);
    expect(decodeKeysetCursor(cursor, cursor.length)).toEqual(['k', 'x'.repeat(100)]);
    expect(decodeKeysetCursor(cursor, cursor.length - 1)).toBeNull();
  });
});
