import fc from 'fast-check';
import { DEFAULT_MAX_JSON_DEPTH, exceedsJsonDepth, JSON_BODY_VERIFIED, jsonDepthVerifier } from './json-depth-limit';
import { HttpRequestError } from './http-request.errors';
import { thrown } from '../shared/testing/thrown';

const bytes = (text: string) => Buffer.from(text, 'utf8');

function depthOf(value: unknown): number {
  let deepest = 0;
  const pending: Array<[unknown, number]> = [[value, 0]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [item, depth] = next;
    if (typeof item !== 'object' || item === null) continue;
    deepest = Math.max(deepest, depth + 1);
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return deepest;
}

describe('exceedsJsonDepth', () => {
  it('counts nested arrays and objects: a scalar is 0, {"a":[1]} is 2', () => {
    expect(exceedsJsonDepth(bytes('1'), 0)).toBe(false);
    expect(exceedsJsonDepth(bytes('{"a":[1]}'), 2)).toBe(false);
    expect(exceedsJsonDepth(bytes('{"a":[1]}'), 1)).toBe(true);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(exceedsJsonDepth(bytes('{"a":"[[[[{{{{\\"[[[[\\\\"}'), 1)).toBe(false);
    expect(exceedsJsonDepth(bytes('["\\\\",[[1]]]'), 2)).toBe(true);
  });

  it('answers a 10,000-deep text without recursion', () => {
    expect(exceedsJsonDepth(bytes('['.repeat(10_000) + ']'.repeat(10_000)), DEFAULT_MAX_JSON_DEPTH)).toBe(true);
  });

  it('agrees with the depth of the parsed value for any JSON value (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 1, max: 10 }), (value, maxDepth) => {
        expect(exceedsJsonDepth(bytes(JSON.stringify(value)), maxDepth)).toBe(depthOf(value) > maxDepth);
      }),
    );
  });
});

describe('jsonDepthVerifier', () => {
  it('throws body_too_deep with the limit and marks an accepted request', () => {
    const verify = jsonDepthVerifier(2);
    const request: Record<PropertyKey, unknown> = {};
    verify(request, {}, bytes('[[1]]'), 'utf-8');
    expect(request[JSON_BODY_VERIFIED]).toBe(true);
    const error = thrown(() => verify({}, {}, bytes('[[[1]]]'), 'utf-8'), HttpRequestError);
    expect(error).toMatchObject({ code: 'body_too_deep', details: { max_depth: 2 } });
  });

  it('never keeps the body body-parser copies onto the error it is given', () => {
    const error = thrown(() => jsonDepthVerifier(1)({}, {}, bytes('[["canary"]]'), 'utf-8'), HttpRequestError) as HttpRequestError & { body?: unknown };
    error.body = Buffer.from('canary');
    expect(error.body).toBeUndefined();
    expect(JSON.stringify(Object.entries(error))).not.toContain('canary');
  });

  it('decodes UTF-16 before counting, and refuses a charset it cannot decode', () => {
    const utf16 = Buffer.from('["\u5b22\u5b22",1]', 'utf16le');
    expect(() => jsonDepthVerifier(1)({}, {}, utf16, 'utf-16le')).not.toThrow();
    expect(thrown(() => jsonDepthVerifier(1)({}, {}, utf16, 'utf-7'), HttpRequestError).code).toBe('unsupported_charset');
  });

  it.each([0, -1, 1.5, Number.NaN, '64'])('refuses maxDepth %p with a TypeError', (maxDepth) => {
    expect(() => jsonDepthVerifier(maxDepth as number)).toThrow(TypeError);
  });
});
