import { thrown } from '../../shared/testing/thrown';
import { EvalServiceError } from '../eval.errors';
import { EVAL_REQUEST_LIMITS, prewalkRequest } from './request-prewalk';

const MiB = 1024 * 1024;

const refusal = (request: unknown): EvalServiceError => thrown(() => prewalkRequest(request), EvalServiceError);

/** `depth` nested arrays (`[[…]]`), built iteratively. */
function nestedArrays(depth: number): unknown[] {
  let value: unknown[] = [];
  for (let level = 1; level < depth; level++) value = [value];
  return value;
}

/** A trap-counting Proxy over `target`. */
function trappedProxy(target: object): { proxy: object; trap: jest.Mock } {
  const trap = jest.fn(() => {
    throw new Error('trap ran');
  });
  const handler: ProxyHandler<object> = { get: trap, getOwnPropertyDescriptor: trap, ownKeys: trap, getPrototypeOf: trap, has: trap };
  return { proxy: new Proxy(target, handler), trap };
}

describe('prewalkRequest (spec 05 §4.2)', () => {
  describe('copy', () => {
    it('returns plain data that holds no reference into the request', () => {
      const request = { set: { id: 's', cases: [{ case_id: 'c', input: 'hi' }] }, n: -1.5, ok: true, none: null };
      const copy = prewalkRequest(request) as typeof request;
      expect(copy).toEqual(request);
      expect(copy).not.toBe(request);
      expect(copy.set.cases).not.toBe(request.set.cases);
      expect(Array.isArray(copy.set.cases)).toBe(true);
      request.set.cases[0].input = 'changed';
      expect(copy.set.cases[0].input).toBe('hi');
    });

    it('keeps "__proto__" as an ordinary member (null-prototype objects) and survives a structured clone', () => {
      const copy = prewalkRequest(JSON.parse('{"__proto__":{"polluted":true},"a":1}')) as Record<string, unknown>;
      expect(Object.getPrototypeOf(copy)).toBeNull();
      expect(Object.keys(copy)).toEqual(['__proto__', 'a']);
      const cloned = structuredClone(copy);
      // the clone is an ordinary object (of the realm that cloned it) with an own "__proto__" member
      expect(Object.getPrototypeOf(cloned)).not.toBeNull();
      expect(Object.hasOwn(cloned, '__proto__')).toBe(true);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('drops undefined members of objects, as JSON does', () => {
      expect(prewalkRequest({ a: undefined, b: 1 })).toEqual({ b: 1 });
    });

    it('accepts a value that is not an object at the root (the preparation decides about it)', () => {
      expect(prewalkRequest('text')).toBe('text');
      expect(prewalkRequest(null)).toBeNull();
    });
  });

  describe('limits → evaluation_request_limit_exceeded', () => {
    it('accepts 64 levels of nesting and refuses the 65th (`depth`)', () => {
      expect(() => prewalkRequest(nestedArrays(64))).not.toThrow();
      const error = refusal(nestedArrays(65));
      expect(error.code).toBe('evaluation_request_limit_exceeded');
      expect(error.details).toEqual({ limit: 'depth' });
    });

    it('stops a 1,000,000-deep request at the first level beyond the bound', () => {
      // built before the clock starts: only the refusal is timed, and a walk of a million levels would take far longer
      const request = { metadata: nestedArrays(1_000_000) };
      const started = performance.now();
      expect(refusal(request).details).toEqual({ limit: 'depth' });
      expect(performance.now() - started).toBeLessThan(1000);
    });

    it('accepts 50,000 nodes and refuses 50,001 (`nodes`)', () => {
      // the root array is one node, each element another
      expect(() => prewalkRequest(new Array(EVAL_REQUEST_LIMITS.maxNodes - 1).fill(0))).not.toThrow();
      expect(refusal(new Array(EVAL_REQUEST_LIMITS.maxNodes).fill(0)).details).toEqual({ limit: 'nodes' });
    });

    it('counts every object member as a node, an undefined one included', () => {
      const wide: Record<string, unknown> = {};
      for (let i = 0; i < EVAL_REQUEST_LIMITS.maxNodes; i++) wide[`k${i}`] = i % 2 === 0 ? undefined : i;
      expect(refusal(wide).details).toEqual({ limit: 'nodes' });
    });

    it('refuses an array longer than the nodes left before reading any element', () => {
      const getter = jest.fn(() => 1);
      const huge = new Array(100_000_000);
      Object.defineProperty(huge, 0, { get: getter, enumerable: true });
      expect(refusal({ metrics: huge }).details).toEqual({ limit: 'nodes' });
      expect(getter).not.toHaveBeenCalled();
    });

    it('accepts 2 MiB of string data in UTF-8 bytes and refuses one byte more (`bytes`), keys included', () => {
      expect(() => prewalkRequest({ a: 'x'.repeat(2 * MiB - 1) })).not.toThrow();
      expect(refusal({ ab: 'x'.repeat(2 * MiB - 1) }).details).toEqual({ limit: 'bytes' });
      // 'é' takes two bytes: 1 MiB of them is exactly the bound
      expect(() => prewalkRequest(['é'.repeat(MiB)])).not.toThrow();
      expect(refusal(['é'.repeat(MiB), 'x']).details).toEqual({ limit: 'bytes' });
    });

    it('refuses a 100 MB string without scanning it', () => {
      const request = { metadata: { blob: 'x'.repeat(100_000_000) } };
      const started = performance.now();
      expect(refusal(request).details).toEqual({ limit: 'bytes' });
      expect(performance.now() - started).toBeLessThan(1000);
    });
  });

  describe('not plain data → invalid_eval_request', () => {
    const cases: [string, () => unknown, string][] = [
      ['a function', () => ({ f: () => 1 }), 'function'],
      ['a symbol value', () => ({ s: Symbol('s') }), 'symbol'],
      ['a bigint', () => ({ n: 10n }), 'bigint'],
      ['undefined in an array', () => ({ a: [1, undefined] }), 'undefined'],
      ['a hole in an array', () => ({ a: [1, , 3] }), 'undefined'], // eslint-disable-line no-sparse-arrays
      ['NaN', () => ({ n: NaN }), 'non_finite_number'],
      ['Infinity', () => [Infinity], 'non_finite_number'],
      ['a class instance', () => ({ c: new (class Thing {})() }), 'non_plain_object'],
      ['a Date', () => ({ d: new Date() }), 'non_plain_object'],
      ['a Map', () => ({ m: new Map() }), 'non_plain_object'],
      ['a typed array', () => ({ t: new Uint8Array(2) }), 'non_plain_object'],
      ['an array subclass', () => ({ a: new (class List extends Array {})() }), 'non_plain_object'],
      ['a symbol key', () => ({ [Symbol('k')]: 1 }), 'hidden_property'],
      ['a non-enumerable member', () => Object.defineProperty({}, 'hidden', { value: 1, enumerable: false }), 'hidden_property'],
      ['U+0000 in a string', () => ({ set: { id: 'a\u0000b' } }), 'nul_character'],
      ['U+0000 in a key', () => ({ 'k\u0000': 1 }), 'nul_character'],
      ['a lone surrogate', () => ({ s: 'x\ud800' }), 'invalid_utf8'],
    ];
    it.each(cases)('refuses %s', (_name, build, reason) => {
      const error = refusal(build());
      expect(error.code).toBe('invalid_eval_request');
      expect(error.details).toEqual({ reason });
    });

    it('refuses a cycle, also one far from the root, before its depth passes the bound', () => {
      const self: Record<string, unknown> = {};
      self.self = self;
      expect(refusal(self).details).toEqual({ reason: 'cycle' });
      const root: Record<string, unknown> = {};
      let tail = root;
      for (let i = 0; i < 40; i++) tail = (tail.next = {}) as Record<string, unknown>;
      tail.back = root;
      expect(refusal({ metadata: root }).details).toEqual({ reason: 'cycle' });
    });

    it('copies a shared (non-cyclic) object twice', () => {
      const shared = { a: 1 };
      expect(prewalkRequest({ x: shared, y: [shared] })).toEqual({ x: { a: 1 }, y: [{ a: 1 }] });
    });

    it('never calls a getter, at the root or deep in the request', () => {
      const getter = jest.fn(() => 'secret');
      expect(refusal(Object.defineProperty({}, 'set', { get: getter, enumerable: true })).details).toEqual({ reason: 'accessor' });
      const deep = { metadata: { list: [0, 1] } };
      Object.defineProperty(deep.metadata.list, 1, { get: getter, enumerable: true });
      expect(refusal(deep).details).toEqual({ reason: 'accessor' });
      expect(getter).not.toHaveBeenCalled();
    });

    it('refuses a Proxy, at the root or nested, without running a trap', () => {
      const root = trappedProxy({ set: {} });
      expect(refusal(root.proxy).details).toEqual({ reason: 'non_plain_object' });
      const nested = trappedProxy([1, 2]);
      expect(refusal({ metrics: nested.proxy }).details).toEqual({ reason: 'non_plain_object' });
      expect(root.trap).not.toHaveBeenCalled();
      expect(nested.trap).not.toHaveBeenCalled();
    });

    it('names no content in its errors', () => {
      const error = refusal({ 'secret-key': { token: 'hunter2', f: () => 'hunter2' } });
      expect(error.message).not.toMatch(/hunter2|secret-key|token/);
    });
  });
});
