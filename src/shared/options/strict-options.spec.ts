import { integerIn } from './option-rules';
import { readStrictOptions } from './strict-options';

class Unknown extends Error {
  constructor(readonly keys: readonly string[]) {
    super('unknown');
  }
}
class Invalid extends Error {
  constructor(readonly option: string) {
    super('invalid');
  }
}
const failures = { unknownKeys: (keys: readonly string[]) => new Unknown(keys), invalid: (option: string) => new Invalid(option) };
const rules = { alpha: integerIn(1, 5), beta: integerIn(0, 1) };
const read = (value: unknown) => readStrictOptions(value, rules, 'options', failures);
const failureOf = (value: unknown): unknown => {
  try {
    read(value);
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
};

describe('readStrictOptions', () => {
  it('returns the given values and leaves out undefined ones', () => {
    expect({ ...read({ alpha: 3, beta: undefined }) }).toEqual({ alpha: 3 });
    expect({ ...read(undefined) }).toEqual({});
  });

  it('names unknown keys sorted, non-identifiers as unknown', () => {
    expect(failureOf({ zeta: 1, alpha: 1, eta: 2 })).toEqual(new Unknown(['eta', 'zeta']));
    expect((failureOf({ [Symbol('s')]: 1 }) as Unknown).keys).toEqual(['unknown']);
  });

  it('names the first bad option in sorted order', () => {
    expect((failureOf({ beta: 7, alpha: 0 }) as Invalid).option).toBe('alpha');
    expect((failureOf({ beta: 7 }) as Invalid).option).toBe('beta');
  });

  it('refuses non-plain values and accessors without calling them', () => {
    const getter = jest.fn(() => 1);
    expect((failureOf(Object.defineProperty({}, 'alpha', { get: getter, enumerable: true })) as Invalid).option).toBe('alpha');
    expect(getter).not.toHaveBeenCalled();
    expect((failureOf(new Proxy({}, {})) as Invalid).option).toBe('options');
    expect((failureOf(new Map()) as Invalid).option).toBe('options');
    expect((failureOf(null) as Invalid).option).toBe('options');
  });
});
