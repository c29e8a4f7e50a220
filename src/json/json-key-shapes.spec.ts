import { sortedOrder } from './json-key-shapes';

describe('sortedOrder', () => {
  const reference = (keys: string[]) => keys.map((_, i) => i).sort((a, b) => (keys[a] < keys[b] ? -1 : 1));

  it('is null for keys already in UTF-16 code-unit order, and for fewer than two keys', () => {
    expect(sortedOrder([])).toBeNull();
    expect(sortedOrder(['z'])).toBeNull();
    expect(sortedOrder(['1', '10', '9', 'a', 'b\u00e9', '\u{10000}', '\uffff'])).toBeNull();
  });

  it('sorts by UTF-16 code units, for few keys (insertion sort) and many (built-in sort)', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const alphabet = ['a', 'b', 'Z', '0', '9', 'é', '\uffff', '\u{10000}', '\ud7ff', '_'];
    for (const n of [2, 3, 8, 24, 25, 40, 200]) {
      for (let round = 0; round < 20; round++) {
        const keys = new Set<string>();
        while (keys.size < n) {
          let key = '';
          for (let i = Math.floor(random() * 4); i >= 0; i--) key += alphabet[Math.floor(random() * alphabet.length)];
          keys.add(key);
        }
        const list = [...keys];
        const order = sortedOrder(list);
        expect(order ?? list.map((_, i) => i)).toEqual(reference(list));
      }
    }
  });

  it('sorts keys that arrive in reverse order', () => {
    expect(sortedOrder(['c', 'b', 'a'])).toEqual([2, 1, 0]);
    const many = Array.from({ length: 100 }, (_, i) => `k${String(99 - i).padStart(3, '0')}`);
    expect(sortedOrder(many)).toEqual(Array.from({ length: 100 }, (_, i) => 99 - i));
  });
});
