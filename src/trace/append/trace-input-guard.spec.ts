import { guardTraceInput, ownEntries, TRACE_INPUT_LIMITS } from './trace-input-guard';
import { TraceStoreError } from '../trace-store.errors';
import { thrown } from '../../shared/testing/thrown';

const MAX_EVENT_BYTES = 262_144;
const guard = (input: unknown, maxEventBytes = MAX_EVENT_BYTES) => guardTraceInput(input, maxEventBytes);
const failure = (input: unknown, maxEventBytes = MAX_EVENT_BYTES) => thrown(() => guard(input, maxEventBytes), TraceStoreError);
const tooLarge = (limit: number) => ({ code: 'trace_event_input_too_large', details: { limit } });
const invalid = (field: string) => ({ code: 'invalid_trace_event', details: { field } });

/** `depth` nested containers: `nested(1)` is `[]`. */
function nested(depth: number, make: (inner: unknown) => unknown = (inner) => [inner]): unknown {
  let value: unknown = [];
  for (let level = 1; level < depth; level++) value = make(value);
  return value;
}

describe('guardTraceInput (spec 06 §4 step 2)', () => {
  describe('what it accepts', () => {
    it('accepts plain JSON: objects, null-prototype objects, arrays, strings, finite numbers, booleans, null', () => {
      const bare = Object.assign(Object.create(null) as object, { a: 1 });
      expect(() => guard({ s: 'x', n: -1.5, z: 0, t: true, f: false, nil: null, list: [1, 'a', [], {}], bare })).not.toThrow();
      for (const scalar of ['text', 3, true, null]) expect(() => guard(scalar)).not.toThrow();
    });

    it('ignores symbol keys and non-enumerable properties, as JSON does', () => {
      const value = { a: 1, [Symbol('s')]: () => 1 };
      Object.defineProperty(value, 'hidden', { value: Symbol('h'), enumerable: false });
      Object.defineProperty(value, 'hiddenGetter', { get: () => 1, enumerable: false });
      expect(() => guard(value)).not.toThrow();
    });
  });

  describe('depth ≤ 32', () => {
    it('accepts 32 levels and refuses 33 with {limit: 32}', () => {
      expect(() => guard(nested(32))).not.toThrow();
      expect(failure(nested(33))).toMatchObject(tooLarge(32));
      expect(() => guard(nested(32, (inner) => ({ a: inner })))).not.toThrow();
      expect(failure(nested(33, (inner) => ({ a: inner })))).toMatchObject(tooLarge(32));
    });

    it('refuses a 40-deep input', () => {
      expect(failure({ event: 'e', attributes: nested(39, (inner) => ({ phase: inner })) })).toMatchObject(tooLarge(32));
    });

    it('refuses a cycle on depth', () => {
      const loop: Record<string, unknown> = { a: 1 };
      loop.self = loop;
      expect(failure(loop)).toMatchObject(tooLarge(32));
      const list: unknown[] = [];
      list.push(list);
      expect(failure(list)).toMatchObject(tooLarge(32));
    });

    it('walks iteratively: a 1,000,000-deep array or object is refused without a stack overflow', () => {
      expect(failure(nested(1_000_000))).toMatchObject(tooLarge(32));
      expect(failure(nested(1_000_000, (inner) => ({ k: inner })))).toMatchObject(tooLarge(32));
    });
  });

  describe('≤ 10 000 nodes', () => {
    /** A root array of `groups` arrays holding `total - 1 - groups` numbers between them. */
    function withNodes(total: number, groups = 10): unknown[] {
      const leaves = total - 1 - groups;
      return Array.from({ length: groups }, (_, g) => Array.from({ length: Math.floor(leaves / groups) + (g < leaves % groups ? 1 : 0) }, () => 0));
    }

    it('accepts exactly 10 000 values (the input counted) and refuses 10 001 with {limit: 10000}', () => {
      expect(() => guard(withNodes(10_000))).not.toThrow();
      expect(failure(withNodes(10_001))).toMatchObject(tooLarge(TRACE_INPUT_LIMITS.maxNodes));
    });

    it('counts a shared object at every place it appears, so an exponential DAG stops at the node bound', () => {
      let shared: unknown = [0];
      for (let level = 0; level < 30; level++) shared = [shared, shared];
      expect(failure(shared)).toMatchObject(tooLarge(10_000));
    });
  });

  describe('≤ 1024 entries per object or array', () => {
    const objectOf = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));

    it('accepts 1024 and refuses 1025 with {limit: 1024}', () => {
      expect(() => guard(objectOf(1024))).not.toThrow();
      expect(failure(objectOf(1025))).toMatchObject(tooLarge(1024));
      expect(() => guard(new Array(1024).fill(0))).not.toThrow();
      expect(failure(new Array(1025).fill(0))).toMatchObject(tooLarge(1024));
    });

    it('refuses a huge sparse array by its length, without visiting its holes', () => {
      const started = Date.now();
      expect(failure({ list: new Array(1_000_000_000) })).toMatchObject(tooLarge(1024));
      expect(Date.now() - started).toBeLessThan(1000);
    });
  });

  describe('string bytes (keys included) ≤ 4 × maxEventBytes', () => {
    it('accepts exactly the limit and refuses one byte more, counting UTF-8 bytes', () => {
      expect(() => guard({ ab: 'x'.repeat(398) }, 100)).not.toThrow();
      expect(failure({ ab: 'x'.repeat(399) }, 100)).toMatchObject(tooLarge(400));
      // '€' is 3 bytes: 2 + 3 × 132 = 398 fits, 2 + 3 × 133 = 401 does not
      expect(() => guard({ ab: '€'.repeat(132) }, 100)).not.toThrow();
      expect(failure({ ab: '€'.repeat(133) }, 100)).toMatchObject(tooLarge(400));
    });

    it('counts keys and sums every string of the input', () => {
      expect(failure({ ['k'.repeat(399)]: 'xy' }, 100)).toMatchObject(tooLarge(400));
      expect(failure(Array.from({ length: 5 }, () => 'x'.repeat(81)), 100)).toMatchObject(tooLarge(400));
    });

    it('refuses a 64 MiB string under a small limit', () => {
      const huge = 'x'.repeat(64 * 1024 * 1024);
      expect(failure({ metadata: { session: huge } }, 1024)).toMatchObject(tooLarge(4096));
    });
  });

  describe('anything but plain JSON is invalid_trace_event', () => {
    class Custom {
      a = 1;
    }
    const cases: Array<[string, unknown]> = [
      ['undefined', undefined],
      ['a function', () => 1],
      ['a symbol', Symbol('s')],
      ['a bigint', 1n],
      ['NaN', Number.NaN],
      ['Infinity', Number.POSITIVE_INFINITY],
      ['a Date', new Date(0)],
      ['a Map', new Map([['a', 1]])],
      ['a Set', new Set([1])],
      ['a class instance', new Custom()],
      ['an object with a custom prototype', Object.create({ inherited: 1 }) as object],
      ['a typed array', new Uint8Array(2)],
      ['a boxed string', Object('x') as object],
      ['an Array subclass', new (class List extends Array {})()],
      ['a lone surrogate', '\ud800'],
      ['a RegExp', /x/],
      ['an Error', new Error('x')],
    ];

    it.each(cases)('refuses %s at the top, in a member and in an array', (_name, value) => {
      expect(failure(value)).toMatchObject(invalid('input'));
      expect(failure({ metadata: { session: value } })).toMatchObject(invalid('metadata.session'));
      expect(failure({ attributes: { 'gen_ai.response.finish_reasons': ['stop', value] } })).toMatchObject(invalid('attributes.gen_ai.response.finish_reasons'));
    });

    it('refuses an array hole without reading the prototype for it', () => {
      const getter = jest.fn(() => 'from the prototype');
      // index 7: the guard's own short arrays never reach it, so only the hole can meet the getter
      const reasons = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
      reasons.length = 8;
      const sparse = { attributes: { 'gen_ai.response.finish_reasons': reasons } };
      let outcome: unknown;
      Object.defineProperty(Array.prototype, 7, { get: getter, configurable: true });
      try {
        guard(sparse);
      } catch (error) {
        outcome = error;
      } finally {
        delete (Array.prototype as unknown as Record<number, unknown>)[7];
      }
      expect(outcome).toBeInstanceOf(TraceStoreError);
      expect(outcome).toMatchObject(invalid('attributes.gen_ai.response.finish_reasons'));
      expect(getter).not.toHaveBeenCalled();
    });

    it('names only allow-listed keys in {field}: an unknown key collapses to the place around it', () => {
      expect(failure({ event: undefined })).toMatchObject(invalid('event'));
      expect(failure({ metadata: { run_id: undefined } })).toMatchObject(invalid('metadata.run_id'));
      expect(failure({ metadata: { secretKeyName: undefined } })).toMatchObject(invalid('metadata'));
      expect(failure({ payload: { inner: { deeper: undefined } } })).toMatchObject(invalid('input'));
      expect(failure({ metadata: { run_id: { inner: undefined } } })).toMatchObject(invalid('metadata.run_id'));
      expect(failure({ attributes: { 'error.type': [undefined] } })).toMatchObject(invalid('attributes.error.type'));
      expect(failure({ workflow_id: 1n })).toMatchObject(invalid('workflow_id'));
    });
  });

  describe('runs no user code', () => {
    it('never calls a getter, even one that throws: an accessor is invalid', () => {
      const calls = jest.fn();
      const root = Object.defineProperty({}, 'event', { get: () => (calls(), 'e'), enumerable: true });
      const throwing = Object.defineProperty({}, 'phase', {
        get: () => {
          throw new Error('getter ran');
        },
        enumerable: true,
      });
      const list = Object.defineProperty(['a'], 0, { get: () => (calls(), 'a'), enumerable: true });
      expect(failure(root)).toMatchObject(invalid('event'));
      expect(failure({ attributes: throwing })).toMatchObject(invalid('attributes.phase'));
      expect(failure({ metadata: { tool: list } })).toMatchObject(invalid('metadata.tool'));
      expect(calls).not.toHaveBeenCalled();
    });

    it('refuses a Proxy without running any of its traps, at the top or nested, revoked or not', () => {
      const traps = jest.fn();
      const handler: ProxyHandler<object> = Object.fromEntries(
        ['get', 'has', 'ownKeys', 'getOwnPropertyDescriptor', 'getPrototypeOf', 'isExtensible', 'defineProperty'].map((trap) => [trap, (...args: unknown[]) => traps(trap, args)]),
      );
      expect(failure(new Proxy({ event: 'e' }, handler))).toMatchObject(invalid('input'));
      expect(failure({ metadata: new Proxy({}, handler) })).toMatchObject(invalid('metadata'));
      expect(failure([new Proxy([], handler)])).toMatchObject(invalid('input'));
      const revocable = Proxy.revocable({}, {});
      revocable.revoke();
      expect(failure({ attributes: revocable.proxy })).toMatchObject(invalid('attributes'));
      expect(traps).not.toHaveBeenCalled();
    });

    it('never calls toJSON: an own toJSON function is invalid, a class with toJSON is not plain, a hidden one is ignored', () => {
      const toJSON = jest.fn(() => ({ event: 'e' }));
      expect(failure({ toJSON })).toMatchObject(invalid('input'));
      class Serialisable {
        toJSON() {
          return toJSON();
        }
      }
      expect(failure({ metadata: new Serialisable() })).toMatchObject(invalid('metadata'));
      expect(() => guard(Object.defineProperty({ event: 'e' }, 'toJSON', { value: toJSON, enumerable: false }))).not.toThrow();
      expect(toJSON).not.toHaveBeenCalled();
    });
  });

  it('never names a user key or value in an error (canary)', () => {
    const canary = 'CANARY_s3cr3t';
    const inputs: unknown[] = [
      { [canary]: undefined },
      { metadata: { [canary]: () => canary } },
      { payload: nested(40, (inner) => ({ [canary]: inner })) },
      { [canary]: 'x'.repeat(2000) },
      Object.defineProperty({}, canary, { get: () => canary, enumerable: true }),
    ];
    for (const input of inputs) {
      const error = failure(input, 100);
      expect(`${error.message} ${JSON.stringify(error.details)} ${String(error)}`).not.toContain(canary);
    }
  });
});

describe('ownEntries', () => {
  it('returns the own enumerable members in enumeration order, and nothing inherited or hidden', () => {
    const value = Object.assign(Object.create({ inherited: 1 }) as object, { b: 1, a: 2 });
    Object.defineProperty(value, 'hidden', { value: 3, enumerable: false });
    expect([...ownEntries(value)]).toEqual([
      ['b', 1],
      ['a', 2],
    ]);
  });
});
