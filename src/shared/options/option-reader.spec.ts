import { firstFailures, optionFailureDetails, readIdRecord, readOptions, readOwnData } from './option-reader';
import { integerIn, oneOf } from './option-rules';

const rules = { limit: integerIn(1), mode: oneOf('a', 'b') };
const refuse = { name: 'options', unknownKeys: 'refuse' } as const;
const ignore = { name: 'options', unknownKeys: 'ignore' } as const;

describe('readOwnData', () => {
  it('reads own data properties of the known keys into a null-prototype record', () => {
    const own = readOwnData({ limit: 2, other: 1 }, ['limit', 'mode']);
    expect(own?.values).toEqual({ limit: 2 });
    expect(Object.getPrototypeOf(own?.values)).toBeNull();
    expect(own?.unknown).toEqual(['other']);
  });

  it('never calls a getter: the key is reported as an accessor', () => {
    const getter = jest.fn(() => 3);
    const own = readOwnData(Object.defineProperty({}, 'limit', { get: getter, enumerable: true }), ['limit']);
    expect(own?.accessors).toEqual(['limit']);
    expect(getter).not.toHaveBeenCalled();
  });

  it('ignores the prototype chain', () => {
    const inherited = Object.create({ limit: 5 }) as object;
    expect(readOwnData(inherited, ['limit'])).toBeNull();
    expect(readOwnData(Object.assign(Object.create(null), { limit: 5 }), ['limit'])?.values).toEqual({ limit: 5 });
  });

  it('refuses proxies without running a trap, and non-plain objects', () => {
    const trap = jest.fn();
    const proxy = new Proxy({ limit: 1 }, { ownKeys: trap, getOwnPropertyDescriptor: trap, getPrototypeOf: trap });
    expect(readOwnData(proxy, ['limit'])).toBeNull();
    expect(trap).not.toHaveBeenCalled();
    for (const value of [null, 1, 'x', [], new Map(), new (class Options {})(), () => 1]) expect(readOwnData(value, ['limit'])).toBeNull();
  });

  it('names unknown keys only when they are identifiers; symbols and odd names are "unknown"', () => {
    const own = readOwnData({ good_name: 1, 'bad\nname': 2, [Symbol('s')]: 3, zeta: 4 }, []);
    expect(own?.unknown).toEqual(['good_name', 'unknown', 'zeta']);
  });
});

describe('readIdRecord', () => {
  it('reads the entries of a plain object keyed by ids', () => {
    expect(readIdRecord({ 'agent-a': 1, b: { x: 2 } })).toEqual([
      ['agent-a', 1],
      ['b', { x: 2 }],
    ]);
    expect(readIdRecord(Object.create(null))).toEqual([]);
  });

  it('refuses a key that breaks the id rule, a symbol key, a getter (never called), a proxy and a non-plain object', () => {
    const getter = jest.fn(() => 1);
    expect(readIdRecord({ 'bad\u0001key': 1 })).toBeNull();
    expect(readIdRecord({ '': 1 })).toBeNull();
    expect(readIdRecord({ [Symbol('s')]: 1 })).toBeNull();
    expect(readIdRecord(Object.defineProperty({}, 'a', { get: getter, enumerable: true }))).toBeNull();
    expect(getter).not.toHaveBeenCalled();
    expect(readIdRecord(new Proxy({ a: 1 }, {}))).toBeNull();
    expect(readIdRecord(new Map([['a', 1]]))).toBeNull();
    expect(readIdRecord([1])).toBeNull();
    expect(readIdRecord(null)).toBeNull();
  });
});

describe('readOptions', () => {
  it('takes undefined, and undefined values, as "not given"', () => {
    expect(readOptions(undefined, rules, refuse)).toEqual({ ok: true, values: {} });
    expect(readOptions({ limit: undefined }, rules, refuse)).toEqual({ ok: true, values: {} });
  });

  it('returns the values that pass their rules', () => {
    expect(readOptions({ limit: 3, mode: 'b' }, rules, refuse)).toEqual({ ok: true, values: { limit: 3, mode: 'b' } });
  });

  it('reports every failing field, sorted', () => {
    expect(readOptions({ mode: 'c', limit: 0 }, rules, refuse)).toEqual({ ok: false, fields: ['limit', 'mode'], unknown: [] });
  });

  it('refuses or ignores unknown keys as the caller chooses', () => {
    expect(readOptions({ limit: 1, extra: true }, rules, refuse)).toEqual({ ok: false, fields: ['extra'], unknown: ['extra'] });
    expect(readOptions({ limit: 1, extra: true }, rules, ignore)).toEqual({ ok: true, values: { limit: 1 } });
  });

  it('reports an accessor as a failure of its field', () => {
    const options = Object.defineProperty({ mode: 'a' }, 'limit', { get: () => 1, enumerable: true });
    expect(readOptions(options, rules, ignore)).toEqual({ ok: false, fields: ['limit'], unknown: [] });
  });

  it('reports an unusable value under the given name', () => {
    expect(readOptions(new Proxy({}, {}), rules, { name: 'config', unknownKeys: 'ignore' })).toEqual({ ok: false, fields: ['config'], unknown: [] });
    expect(readOptions(null, rules, refuse)).toEqual({ ok: false, fields: ['options'], unknown: [] });
  });

  it('names the unknown keys among the failed fields, and none when they are ignored', () => {
    expect(readOptions({ zeta: 1, limit: 0, alpha: 2 }, rules, refuse)).toEqual({ ok: false, fields: ['alpha', 'limit', 'zeta'], unknown: ['alpha', 'zeta'] });
    expect(readOptions({ zeta: 1, limit: 0 }, rules, ignore)).toEqual({ ok: false, fields: ['limit'], unknown: [] });
  });
});

describe('firstFailures', () => {
  const failure = (value: unknown) => {
    const read = readOptions(value, rules, refuse);
    if (read.ok) throw new Error('the read passed');
    return read;
  };

  it('is every unknown key when there is one, before any bad value', () => {
    expect(firstFailures(failure({ zeta: 1, limit: 0, alpha: 2 }))).toEqual(['alpha', 'zeta']);
  });

  it('is else the first failed field in sorted order, or the name of an unusable value', () => {
    expect(firstFailures(failure({ mode: 'c', limit: 0 }))).toEqual(['limit']);
    expect(firstFailures(failure(Object.defineProperty({ mode: 'c' }, 'limit', { get: () => 1, enumerable: true })))).toEqual(['limit']);
    expect(firstFailures(failure(null))).toEqual(['options']);
  });
});

describe('optionFailureDetails', () => {
  it('is {field} for one failure and sorted {fields} for several', () => {
    expect(optionFailureDetails(['limit'])).toEqual({ field: 'limit' });
    expect(optionFailureDetails(['mode', 'limit'])).toEqual({ fields: ['limit', 'mode'] });
  });
});
