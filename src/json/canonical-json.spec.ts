import { canonicalJson } from './canonical-json';
import { JsonError } from './json.errors';

/** The IEEE 754 double whose bits are `hex` (RFC 8785 Appendix B). */
function double(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}

/** The error `canonicalJson(value)` throws (fails the test when it does not throw). */
function errorOf(value: unknown): JsonError {
  try {
    canonicalJson(value);
  } catch (error) {
    expect(error).toBeInstanceOf(JsonError);
    return error as JsonError;
  }
  throw new Error('canonicalJson did not throw');
}

/** A Proxy whose every trap counts and throws, so any trap run is visible. */
function trappedProxy<T extends object>(target: T): { proxy: T; traps: () => number } {
  let count = 0;
  const handler = new Proxy({}, {
    get: () => () => {
      count++;
      throw new Error('trap ran');
    },
  });
  return { proxy: new Proxy(target, handler), traps: () => count };
}

describe('§2.1 canonicalJson: RFC 8785 output', () => {
  it('writes the literals null, true and false', () => {
    expect(canonicalJson(null)).toBe('null');
    expect(canonicalJson(true)).toBe('true');
    expect(canonicalJson(false)).toBe('false');
  });

  it('reproduces the RFC 8785 §3.2.2 sample (whitespace, numbers, string escapes, key order)', () => {
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],' +
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",' +
        ' "literals": [null, true, false]}',
    );
    expect(canonicalJson(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it('sorts keys by UTF-16 code units as in the RFC 8785 §3.2.3 sample, non-BMP keys included', () => {
    const input = {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
    };
    const values = Object.values(JSON.parse(canonicalJson(input)) as Record<string, string>);
    const order = [...canonicalJson(input).matchAll(/:"([^"]+)"/g)].map((m) => m[1]);
    expect(order).toEqual([
      'Carriage Return',
      'One',
      'Control',
      'Latin Small Letter O With Diaeresis',
      'Euro Sign',
      'Emoji: Grinning Face',
      'Hebrew Letter Dalet With Dagesh',
    ]);
    expect(values).toHaveLength(7);
  });

  it('orders a surrogate-pair key before a BMP key above U+D7FF, unlike code-point order', () => {
    expect(canonicalJson({ '\uffff': 1, '\u{10000}': 2 })).toBe('{"\u{10000}":2,"\uffff":1}');
  });

  it.each([
    ['0000000000000000', '0'],
    ['8000000000000000', '0'],
    ['0000000000000001', '5e-324'],
    ['8000000000000001', '-5e-324'],
    ['7fefffffffffffff', '1.7976931348623157e+308'],
    ['ffefffffffffffff', '-1.7976931348623157e+308'],
    ['4340000000000000', '9007199254740992'],
    ['c340000000000000', '-9007199254740992'],
    ['4430000000000000', '295147905179352830000'],
    ['44b52d02c7e14af5', '9.999999999999997e+22'],
    ['44b52d02c7e14af6', '1e+23'],
    ['44b52d02c7e14af7', '1.0000000000000001e+23'],
    ['444b1ae4d6e2ef4e', '999999999999999700000'],
    ['444b1ae4d6e2ef4f', '999999999999999900000'],
    ['444b1ae4d6e2ef50', '1e+21'],
    ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
    ['3eb0c6f7a0b5ed8d', '0.000001'],
    ['41b3de4355555553', '333333333.3333332'],
    ['41b3de4355555554', '333333333.33333325'],
    ['41b3de4355555555', '333333333.3333333'],
    ['41b3de4355555556', '333333333.3333334'],
    ['41b3de4355555557', '333333333.33333343'],
    ['becbf647612f3696', '-0.0000033333333333333333'],
    ['43143ff3c1cb0959', '1424953923781206.2'],
  ])('serialises the RFC 8785 Appendix B double %s as %s', (hex, expected) => {
    expect(canonicalJson(double(hex))).toBe(expected);
  });

  it('prints numbers in ECMAScript form: 1e+21, 1e-7, 0.30000000000000004, -0 as 0', () => {
    expect(canonicalJson([1e21, 1e-7, 0.1 + 0.2, -0, 1, 1e23, -1.5])).toBe('[1e+21,1e-7,0.30000000000000004,0,1,1e+23,-1.5]');
  });

  it('escapes quote, backslash and U+0000–U+001F exactly as JSON.stringify, in lowercase hex', () => {
    let controls = '';
    for (let c = 0; c < 0x20; c++) controls += String.fromCharCode(c);
    expect(canonicalJson(controls)).toBe(
      '"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r\\u000e\\u000f' +
        '\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f"',
    );
    expect(canonicalJson('"\\')).toBe('"\\"\\\\"');
  });

  it('leaves /, DEL, U+2028, U+2029, non-ASCII and surrogate pairs raw', () => {
    const raw = '/\u007f\u2028\u2029é€\u{1f600}';
    expect(canonicalJson(raw)).toBe(`"${raw}"`);
  });

  it('writes no whitespace anywhere', () => {
    expect(canonicalJson({ a: [1, { b: null }], c: 'd e' })).toBe('{"a":[1,{"b":null}],"c":"d e"}');
  });

  it('turns array holes and undefined elements into null, even when Array.prototype has that index', () => {
    // eslint-disable-next-line no-sparse-arrays
    expect(canonicalJson([1, , undefined, 3])).toBe('[1,null,null,3]');
    (Array.prototype as unknown as Record<number, unknown>)[1] = 'inherited';
    try {
      // eslint-disable-next-line no-sparse-arrays
      expect(canonicalJson([1, , 3])).toBe('[1,null,3]');
    } finally {
      delete (Array.prototype as unknown as Record<number, unknown>)[1];
    }
  });

  it('omits members whose value is undefined', () => {
    expect(canonicalJson({ a: undefined, b: 1, c: undefined })).toBe('{"b":1}');
    expect(canonicalJson({ a: undefined })).toBe('{}');
  });

  it('accepts null-prototype objects and treats an own "__proto__" as an ordinary key', () => {
    const bare = Object.create(null) as Record<string, unknown>;
    bare.z = 1;
    bare.a = 2;
    expect(canonicalJson(bare)).toBe('{"a":2,"z":1}');
    expect(canonicalJson(JSON.parse('{"__proto__":{"x":1},"a":0}'))).toBe('{"__proto__":{"x":1},"a":0}');
  });

  it('ignores symbol keys, non-enumerable properties and inherited properties', () => {
    const value: Record<string | symbol, unknown> = { a: 1, [Symbol('s')]: 2 };
    Object.defineProperty(value, 'hidden', { value: () => 0, enumerable: false });
    (Object.prototype as Record<string, unknown>).polluted = 1;
    try {
      expect(canonicalJson(value)).toBe('{"a":1}');
    } finally {
      delete (Object.prototype as Record<string, unknown>).polluted;
    }
  });

  it('ignores key insertion order', () => {
    expect(canonicalJson({ b: 1, a: { d: 2, c: 3 } })).toBe(canonicalJson({ a: { c: 3, d: 2 }, b: 1 }));
  });

  it('serialises shared, non-cyclic references at each occurrence', () => {
    const shared = { x: [1] };
    expect(canonicalJson({ a: shared, b: shared, c: [shared, shared] })).toBe(
      '{"a":{"x":[1]},"b":{"x":[1]},"c":[{"x":[1]},{"x":[1]}]}',
    );
  });

  it('handles a 1,000,000-deep nested array without overflowing the call stack', () => {
    let value: unknown = [];
    for (let i = 0; i < 1_000_000; i++) value = [value];
    const text = canonicalJson(value);
    expect(text).toHaveLength(2_000_002);
    expect(text.startsWith('[[[[')).toBe(true);
    expect(text.endsWith(']]]]')).toBe(true);
  });
});

describe('§2.1 canonicalJson: rejected values', () => {
  class Point {
    x = 1;
  }
  class List extends Array<number> {}

  it.each<[string, unknown, string]>([
    ['undefined at the top level', undefined, 'undefined'],
    ['a function', () => 1, 'function'],
    ['a symbol', Symbol('s'), 'symbol'],
    ['a bigint', 1n, 'bigint'],
    ['NaN', NaN, 'non_finite_number'],
    ['Infinity', Infinity, 'non_finite_number'],
    ['-Infinity', -Infinity, 'non_finite_number'],
    ['a Map', new Map(), 'non_plain_object'],
    ['a Set', new Set(), 'non_plain_object'],
    ['a Date', new Date(0), 'non_plain_object'],
    ['a RegExp', /x/, 'non_plain_object'],
    ['a Buffer', Buffer.from('x'), 'non_plain_object'],
    ['a Uint8Array', new Uint8Array(1), 'non_plain_object'],
    ['a boxed string', Object('x'), 'non_plain_object'],
    ['a boxed number', Object(1), 'non_plain_object'],
    ['a class instance', new Point(), 'non_plain_object'],
    ['an array subclass', List.from([1]), 'non_plain_object'],
    ['an object inheriting from Array.prototype', Object.create(Array.prototype), 'non_plain_object'],
    ['an object with a custom prototype', Object.create({ a: 1 }), 'non_plain_object'],
    ['an Error', new Error('x'), 'non_plain_object'],
    ['a Promise', Promise.resolve(), 'non_plain_object'],
  ])('rejects %s with unsupported_json_term', (_, value, kind) => {
    const error = errorOf(value);
    expect(error.code).toBe('unsupported_json_term');
    expect(error.details).toEqual({ path: [], kind });
  });

  it('reports the path of keys and indices to a nested unsupported value', () => {
    expect(errorOf({ a: [0, { b: NaN }] }).details).toEqual({ path: ['a', '1', 'b'], kind: 'non_finite_number' });
    expect(errorOf([[1, 2, [() => 0]]]).details).toEqual({ path: ['0', '2', '0'], kind: 'function' });
  });

  it('rejects Proxies of objects and arrays without running a single trap', () => {
    for (const target of [{ a: 1 }, [1, 2], Object.create(null) as object]) {
      const { proxy, traps } = trappedProxy(target);
      expect(errorOf({ nested: proxy }).details).toEqual({ path: ['nested'], kind: 'non_plain_object' });
      expect(traps()).toBe(0);
    }
  });

  it('rejects a revoked Proxy as non_plain_object', () => {
    const { proxy, revoke } = Proxy.revocable([], {});
    revoke();
    expect(errorOf([proxy]).details).toEqual({ path: ['0'], kind: 'non_plain_object' });
  });

  it('rejects a getter or setter property of a plain object without calling it', () => {
    const getter = jest.fn(() => 'secret');
    const value = { a: 1 };
    Object.defineProperty(value, 'b', { get: getter, enumerable: true });
    expect(errorOf({ outer: value }).details).toEqual({ path: ['outer', 'b'], kind: 'accessor' });
    expect(getter).not.toHaveBeenCalled();
    const setterOnly = {};
    Object.defineProperty(setterOnly, 's', { set: () => {}, enumerable: true });
    expect(errorOf(setterOnly).details).toEqual({ path: ['s'], kind: 'accessor' });
  });

  it('rejects an array or object that is its own ancestor, at the repeated reference', () => {
    const object: Record<string, unknown> = { a: 1 };
    object.self = object;
    expect(errorOf(object).details).toEqual({ path: ['self'], kind: 'cycle' });
    const array: unknown[] = [0];
    array.push([array]);
    expect(errorOf(array).details).toEqual({ path: ['1', '0'], kind: 'cycle' });
  });

  it.each([
    [0, 40],
    [5, 33],
    [17, 100],
    [40, 17],
    [100, 1_000],
  ])('reports a cycle that starts at depth %i and spans %i levels at its first repetition', (start, length) => {
    const nodes: unknown[][] = [[]];
    for (let i = 1; i < start + length; i++) {
      const node: unknown[] = [];
      nodes[i - 1].push(node);
      nodes.push(node);
    }
    nodes[nodes.length - 1].push(nodes[start]);
    expect(errorOf(nodes[0]).details).toEqual({ path: Array(start + length).fill('0'), kind: 'cycle' });
  });

  it('reports a deep cycle reached through objects with the keys on its path', () => {
    const root: Record<string, unknown> = {};
    let node = root;
    for (let i = 0; i < 50; i++) node = (node[`k${i % 3}`] = { z: i }) as Record<string, unknown>;
    node.back = root;
    const path = [...Array.from({ length: 50 }, (_, i) => `k${i % 3}`), 'back'];
    expect(errorOf(root).details).toEqual({ path, kind: 'cycle' });
  });

  it('rejects a lone surrogate in a string value with invalid_utf8 and its path', () => {
    for (const bad of ['\ud800', 'a\udc00b', 'x\ud83d']) {
      const error = errorOf({ k: ['ok', bad] });
      expect(error.code).toBe('invalid_utf8');
      expect(error.details).toEqual({ path: ['k', '1'] });
    }
  });

  it('rejects a lone surrogate in a key with the path of the object holding it', () => {
    const error = errorOf({ outer: { ['\udfff']: 1 } });
    expect(error.code).toBe('invalid_utf8');
    expect(error.details).toEqual({ path: ['outer'] });
  });

  it('reports the first problem in canonical order: sorted keys, ascending indices', () => {
    expect(errorOf({ b: () => 0, a: Symbol('x') }).details).toEqual({ path: ['a'], kind: 'symbol' });
    expect(errorOf([1n, NaN]).details).toEqual({ path: ['0'], kind: 'bigint' });
    const accessorLater = { a: NaN } as Record<string, unknown>;
    Object.defineProperty(accessorLater, 'z', { get: () => 1, enumerable: true });
    expect(errorOf(accessorLater).details).toEqual({ path: ['a'], kind: 'non_finite_number' });
    const accessorFirst = { z: NaN } as Record<string, unknown>;
    Object.defineProperty(accessorFirst, 'a', { get: () => 1, enumerable: true });
    expect(errorOf(accessorFirst).details).toEqual({ path: ['a'], kind: 'accessor' });
  });

  it('never copies the offending value into the error', () => {
    const secret = 'CANARY-SECRET-VALUE';
    for (const value of [
      { a: secret, b: new Map([[secret, secret]]) },
      [secret, `${secret}\ud800`],
      { fn: Object.defineProperty(() => 0, 'name', { value: secret }) },
      [secret, Object(secret)],
    ]) {
      const error = errorOf(value);
      expect(error.message).not.toContain(secret);
      expect(JSON.stringify(error.details)).not.toContain(secret);
    }
  });

  it('lets an exception thrown by an array element getter through untouched', () => {
    const array = [1];
    const failure = new Error('from user code');
    Object.defineProperty(array, 0, { get: () => { throw failure; } });
    expect(() => canonicalJson(array)).toThrow(failure);
  });
});
