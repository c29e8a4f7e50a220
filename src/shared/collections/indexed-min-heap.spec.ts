import { IndexedMinHeap, type HeapItem } from './indexed-min-heap';
import { seededRandom } from '../testing/seeded-random';

interface Item extends HeapItem {
  key: number;
  id: number;
}

const byKeyThenId = (a: Item, b: Item) => a.key < b.key || (a.key === b.key && a.id < b.id);

describe('IndexedMinHeap', () => {
  it('is empty at first', () => {
    const heap = new IndexedMinHeap<Item>(byKeyThenId);
    expect(heap.size).toBe(0);
    expect(heap.peek()).toBeUndefined();
    expect(heap.pop()).toBeUndefined();
  });

  it('pops items in order of the comparator', () => {
    const heap = new IndexedMinHeap<Item>(byKeyThenId);
    const keys = [5, 3, 8, 1, 9, 2, 7, 3];
    keys.forEach((key, id) => heap.push({ key, id, heapIndex: -1 }));
    const popped: Array<[number, number]> = [];
    for (let item = heap.pop(); item; item = heap.pop()) popped.push([item.key, item.id]);
    expect(popped).toEqual([[1, 3], [2, 5], [3, 1], [3, 7], [5, 0], [7, 6], [8, 2], [9, 4]]);
  });

  it('keeps heapIndex pointing at the item and resets it to -1 on removal', () => {
    const heap = new IndexedMinHeap<Item>(byKeyThenId);
    const items = [4, 2, 6].map((key, id) => ({ key, id, heapIndex: -1 }));
    items.forEach((item) => heap.push(item));
    items.forEach((item) => expect(heap.has(item)).toBe(true));
    heap.remove(items[1]);
    expect(items[1].heapIndex).toBe(-1);
    expect(heap.has(items[1])).toBe(false);
    expect(heap.peek()).toBe(items[0]);
  });

  it('matches a sorted array under random push, remove and update', () => {
    const random = seededRandom(20240601);
    const heap = new IndexedMinHeap<Item>(byKeyThenId);
    const model: Item[] = [];
    const minOf = (items: Item[]) => items.reduce<Item | undefined>((min, item) => (min === undefined || byKeyThenId(item, min) ? item : min), undefined);
    const mismatches: string[] = [];
    let nextId = 0;
    for (let step = 0; step < 3000 && mismatches.length === 0; step++) {
      const roll = random();
      if (roll < 0.45 || model.length === 0) {
        const item = { key: Math.floor(random() * 100), id: nextId++, heapIndex: -1 };
        heap.push(item);
        model.push(item);
      } else if (roll < 0.7) {
        const item = model.splice(Math.floor(random() * model.length), 1)[0];
        heap.remove(item);
        if (item.heapIndex !== -1 || heap.has(item)) mismatches.push(`step ${step}: removed item still indexed`);
      } else if (roll < 0.9) {
        const item = model[Math.floor(random() * model.length)];
        item.key = Math.floor(random() * 100);
        heap.update(item);
      } else {
        const min = minOf(model) as Item;
        model.splice(model.indexOf(min), 1);
        if (heap.pop() !== min) mismatches.push(`step ${step}: pop is not the minimum`);
      }
      if (heap.size !== model.length) mismatches.push(`step ${step}: size ${heap.size} != ${model.length}`);
      if (heap.peek() !== minOf(model)) mismatches.push(`step ${step}: peek is not the minimum`);
    }
    expect(mismatches).toEqual([]);
    expect(model.length).toBeGreaterThan(50);
    const drained: Item[] = [];
    for (let item = heap.pop(); item; item = heap.pop()) drained.push(item);
    expect(drained).toEqual(model.sort(byKeyThenIdCompare));
  });
});

function byKeyThenIdCompare(a: Item, b: Item): number {
  return a.key - b.key || a.id - b.id;
}
