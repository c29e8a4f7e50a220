import { canonicalJson } from './canonical-json';
import { measure, measureContent, measureJson, type MeasureResult } from './measure';
import { JsonError } from './json.errors';
import { expectExceededBelow } from './testing/measure-fixtures';
import { thrown as thrownBy } from '../shared/testing/thrown';

const MiB = 2 ** 20;
const LIMIT = 64 * 1024;

const sizeOf = (value: unknown) => Buffer.byteLength(canonicalJson(value), 'utf8');

const thrown = (run: () => unknown) => thrownBy(run, JsonError);

/** Measures with a step meter; returns the result and the steps the walk took. */
function metered(value: unknown, limit: number): { result: MeasureResult; steps: number } {
  const meter = { steps: 0 };
  const result = measureJson(value, limit, meter);
  return { result, steps: meter.steps };
}

/** An object whose canonical JSON is about `bytes` long: members `k<i>` holding one shared 500-byte string. */
function wideObject(bytes: number): Record<string, string> {
  const value = 'v'.repeat(500);
  const object: Record<string, string> = {};
  for (let i = 0; bytes > 0; i++) {
    object[`k${i}`] = value;
    bytes -= 510;
  }
  return object;
}

const samples: unknown[] = [
  null,
  true,
  0,
  -0,
  1e21,
  1e-7,
  0.1 + 0.2,
  '',
  'abc',
  'é€😀\u2028\n\u0001"\\/',
  [],
  {},
  [1, [2, [3, []]], { a: undefined, b: [undefined] }],
  { '€': { '😀': 'x', '\r': [true, false, null] }, z: -1.5e-300 },
];

describe('§2.2 measure', () => {
  it.each(samples.map((value) => [canonicalJson(value), value]))(
    'counts exactly the UTF-8 bytes of the canonical JSON of %s',
    (_, value) => {
      const bytes = sizeOf(value);
      expect(measure(value, bytes)).toEqual({ exceeded: false, bytes });
      expect(measure(value, Number.MAX_SAFE_INTEGER)).toEqual({ exceeded: false, bytes });
    },
  );

  it('is inclusive: a limit equal to the size is within, one less is exceeded with the exact size', () => {
    for (const value of samples) {
      const bytes = sizeOf(value);
      expect(measure(value, bytes).exceeded).toBe(false);
      if (bytes > 0) expect(measure(value, bytes - 1)).toEqual({ exceeded: true, bytes });
    }
  });

  it('reports an exceeded size above the limit and at most the true size', () => {
    const value = { list: ['a'.repeat(300), { deep: ['é'.repeat(100), 12345] }], tail: 'z'.repeat(50) };
    const size = sizeOf(value);
    expectExceededBelow(value, size, 7);
  });

  it('counts escapes and multi-byte characters: "é" is 4 bytes, "\\n" is 4, "\\u0001" is 8, an emoji 6', () => {
    expect(measure('é', 100).bytes).toBe(4);
    expect(measure('\n', 100).bytes).toBe(4);
    expect(measure('\u0001', 100).bytes).toBe(8);
    expect(measure('😀', 100).bytes).toBe(6);
    expect(measure('abc', 100).bytes).toBe(5);
    expect(measure({}, 100).bytes).toBe(2);
  });

  it('returns frozen, deterministic results', () => {
    const value = { a: [1, 2, 3] };
    const first = measure(value, 5);
    expect(Object.isFrozen(first)).toBe(true);
    expect(measure(value, 5)).toEqual(first);
    expect(Object.isFrozen(measure(value, 100))).toBe(true);
  });

  it.each([-1, 1.5, NaN, Infinity, -Infinity, 2 ** 53, '10', null, undefined, 10n])(
    'refuses the limit %p with invalid_measure_limit',
    (limit) => {
      const error = thrown(() => measure('x', limit as number));
      expect(error.code).toBe('invalid_measure_limit');
      expect(thrown(() => measureContent('x', limit as number)).code).toBe('invalid_measure_limit');
    },
  );

  it('accepts a limit of 0 and Number.MAX_SAFE_INTEGER', () => {
    expect(measure(null, 0)).toEqual({ exceeded: true, bytes: 4 });
    expect(measure(null, Number.MAX_SAFE_INTEGER)).toEqual({ exceeded: false, bytes: 4 });
  });

  it('throws the canonicalJson errors for unsupported values it reaches before the limit', () => {
    expect(thrown(() => measure({ a: [1, NaN] }, 1000)).details).toEqual({ path: ['a', '1'], kind: 'non_finite_number' });
    expect(thrown(() => measure(undefined, 1000)).details).toEqual({ path: [], kind: 'undefined' });
    expect(thrown(() => measure(['\ud800'], 1000)).code).toBe('invalid_utf8');
    expect(thrown(() => measure({ ['\ud800']: 1 }, 1000)).details).toEqual({ path: [] });
    const cyclic: unknown[] = [];
    cyclic.push(cyclic);
    expect(thrown(() => measure(cyclic, 1000)).details).toEqual({ path: ['0'], kind: 'cycle' });
    const withGetter = {};
    const getter = jest.fn();
    Object.defineProperty(withGetter, 'g', { get: getter, enumerable: true });
    expect(thrown(() => measure(withGetter, 1000)).details).toEqual({ path: ['g'], kind: 'accessor' });
    expect(getter).not.toHaveBeenCalled();
  });

  it('rejects a Uint8Array, because tool arguments are JSON', () => {
    expect(thrown(() => measure(new Uint8Array([97]), 1000)).details).toEqual({ path: [], kind: 'non_plain_object' });
  });

  it('for a value both oversized and invalid, either throws the §2.1 error or reports exceeded', () => {
    const value = ['x'.repeat(100), () => 0];
    let outcome: string;
    try {
      const result = measure(value, 10);
      outcome = result.exceeded && result.bytes > 10 ? 'exceeded' : 'wrong';
    } catch (error) {
      outcome = (error as JsonError).code;
    }
    expect(['exceeded', 'unsupported_json_term']).toContain(outcome);
  });

  it('measures a 1,000,000-deep nested array iteratively', () => {
    let value: unknown = [];
    for (let i = 0; i < 1_000_000; i++) value = [value];
    expect(measure(value, 10 * MiB)).toEqual({ exceeded: false, bytes: 2_000_002 });
    expect(measure(value, 1_000)).toEqual({ exceeded: true, bytes: 1_001 });
  });

  describe('cost follows the limit, not the input', () => {
    it('concludes exceeded on a 100 MiB string at once from its length', () => {
      const { result, steps } = metered({ text: 'x'.repeat(100 * MiB) }, LIMIT);
      expect(result).toEqual({ exceeded: true, bytes: 100 * MiB + 11 });
      expect(steps).toBeLessThan(10);
    });

    it('stops collecting the members of a 100 MiB object once their lower bound passes 64 KiB', () => {
      const huge = wideObject(100 * MiB);
      const { result, steps } = metered(huge, LIMIT);
      expect(result.exceeded).toBe(true);
      expect(result.bytes).toBeGreaterThan(LIMIT);
      expect(steps).toBeLessThanOrEqual(LIMIT);
      expect(metered(wideObject(50 * MiB), LIMIT).steps).toBe(steps);
    });

    it('concludes exceeded on a 100 MiB array from 2n + 1 before visiting an element', () => {
      const array = new Array<string>(Math.ceil((100 * MiB) / 101)).fill('e'.repeat(98));
      const { result, steps } = metered(array, LIMIT);
      expect(result).toEqual({ exceeded: true, bytes: 2 * array.length + 1 });
      expect(steps).toBe(1);
    });

    it('scans no more than about the limit of a 100 MiB array of large strings', () => {
      const array = new Array<string>(100).fill('s'.repeat(MiB));
      const small = new Array<string>(4_000).fill('t'.repeat(25 * 1024));
      for (const value of [array, small]) {
        const { result, steps } = metered(value, LIMIT);
        expect(result.exceeded).toBe(true);
        expect(result.bytes).toBeGreaterThan(LIMIT);
        expect(steps).toBeLessThanOrEqual(2 * LIMIT);
      }
    });

    it('stops inside deep nesting as soon as the limit is passed', () => {
      let value: unknown = 'x'.repeat(100 * MiB);
      for (let i = 0; i < 10_000; i++) value = { k: [value] };
      const { result, steps } = metered(value, LIMIT);
      expect(result.exceeded).toBe(true);
      expect(steps).toBeLessThanOrEqual(2 * LIMIT);
    });

    it('never reads past the limit: unsupported values beyond it are not reached', () => {
      const array: unknown[] = new Array(10).fill('y'.repeat(LIMIT));
      array.push(() => 0);
      expect(measure(array, LIMIT).exceeded).toBe(true);
    });
  });
});

describe('§2.3 measureContent', () => {
  it('counts a string as its own UTF-8 bytes, without quotes or escapes', () => {
    expect(measureContent('é', 10)).toEqual({ exceeded: false, bytes: 2 });
    expect(measureContent('', 0)).toEqual({ exceeded: false, bytes: 0 });
    expect(measureContent('a"\n', 3)).toEqual({ exceeded: false, bytes: 3 });
    expect(measureContent('😀€', 7)).toEqual({ exceeded: false, bytes: 7 });
    expect(measureContent('😀€', 6)).toEqual({ exceeded: true, bytes: 7 });
  });

  it('refuses a string with a lone surrogate with invalid_utf8 and an empty path', () => {
    const error = thrown(() => measureContent('ok\ud800', 100));
    expect(error.code).toBe('invalid_utf8');
    expect(error.details).toEqual({ path: [] });
  });

  it('concludes exceeded from the UTF-16 length of an oversized string without scanning it', () => {
    expect(measureContent('é'.repeat(100), 50)).toEqual({ exceeded: true, bytes: 100 });
    expect(measureContent('x'.repeat(100 * MiB), LIMIT)).toEqual({ exceeded: true, bytes: 100 * MiB });
  });

  it('counts a Uint8Array or Buffer by byteLength and requires valid UTF-8 within the limit', () => {
    expect(measureContent(Buffer.from('héllo'), 6)).toEqual({ exceeded: false, bytes: 6 });
    expect(measureContent(new Uint8Array([0x68, 0x69]), 2)).toEqual({ exceeded: false, bytes: 2 });
    expect(measureContent(new Uint8Array(new ArrayBuffer(8), 2, 3), 3)).toEqual({ exceeded: false, bytes: 3 });
    const error = thrown(() => measureContent(new Uint8Array([0xc3]), 10));
    expect(error.code).toBe('invalid_utf8');
    expect(error.details).toEqual({ path: [] });
  });

  it('reports an oversized byte array with its exact length without examining its UTF-8', () => {
    expect(measureContent(new Uint8Array([0xff, 0xff, 0xff]), 2)).toEqual({ exceeded: true, bytes: 3 });
  });

  it('believes the intrinsic byteLength, not an own property of the instance', () => {
    const bytes = new Uint8Array([0x61, 0x62, 0x63]);
    Object.defineProperty(bytes, 'byteLength', { value: 0 });
    expect(measureContent(bytes, 2)).toEqual({ exceeded: true, bytes: 3 });
  });

  it('measures anything else as canonical JSON', () => {
    expect(measureContent({ a: 'é' }, 100)).toEqual({ exceeded: false, bytes: 10 });
    expect(measureContent(null, 100)).toEqual({ exceeded: false, bytes: 4 });
    expect(thrown(() => measureContent(new Uint16Array(1), 100)).details).toEqual({ path: [], kind: 'non_plain_object' });
    expect(thrown(() => measureContent(new Proxy(new Uint8Array(1), {}), 100)).details).toEqual({
      path: [],
      kind: 'non_plain_object',
    });
  });

  it('measures a string differently from measure: "abc" is 3 as content and 5 as arguments', () => {
    expect(measureContent('abc', 100).bytes).toBe(3);
    expect(measure('abc', 100).bytes).toBe(5);
  });
});
