import { exceededJsonShape } from './json-shape';

describe('exceededJsonShape', () => {
  it('counts a scalar as depth 0 and one node', () => {
    expect(exceededJsonShape('x', { maxDepth: 1, maxNodes: 1 })).toBeNull();
    expect(exceededJsonShape(null, { maxDepth: 1, maxNodes: 1 })).toBeNull();
  });

  it('counts {} as depth 1 and {"a":[1]} as depth 2 with 3 nodes', () => {
    expect(exceededJsonShape({}, { maxDepth: 1, maxNodes: 1 })).toBeNull();
    expect(exceededJsonShape({ a: [1] }, { maxDepth: 2, maxNodes: 3 })).toBeNull();
    expect(exceededJsonShape({ a: [1] }, { maxDepth: 1, maxNodes: 3 })).toBe('depth');
    expect(exceededJsonShape({ a: [1] }, { maxDepth: 2, maxNodes: 2 })).toBe('nodes');
  });

  it('stops a cycle at the depth bound', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(exceededJsonShape(cycle, { maxDepth: 64, maxNodes: 50_000 })).toBe('depth');
  });

  it('refuses a huge array before walking its elements', () => {
    const huge = new Array(10_000_000);
    expect(exceededJsonShape([huge], { maxDepth: 4, maxNodes: 100 })).toBe('nodes');
  });

  it('walks a 100,000-deep nesting without the call stack', () => {
    let deep: unknown = 0;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(exceededJsonShape(deep, { maxDepth: 200_000, maxNodes: 200_000 })).toBeNull();
    expect(exceededJsonShape(deep, { maxDepth: 99_999, maxNodes: 200_000 })).toBe('depth');
  });

  it('never calls a getter: an accessor counts as one leaf', () => {
    const getter = jest.fn(() => ({ a: { b: { c: 1 } } }));
    const value = Object.defineProperty({}, 'x', { get: getter, enumerable: true });
    expect(exceededJsonShape(value, { maxDepth: 1, maxNodes: 2 })).toBeNull();
    expect(getter).not.toHaveBeenCalled();
  });
});
