/** An item of an {@link IndexedMinHeap}: the heap keeps the item's position in `heapIndex` (-1 when absent). */
export interface HeapItem {
  heapIndex: number;
}

/**
 * Binary min-heap whose items know their own position, so that removal and re-keying of any item
 * are O(log n) without a search. `less(a, b)` orders the items; it must be a strict total order.
 */
export class IndexedMinHeap<T extends HeapItem> {
  private readonly items: T[] = [];

  constructor(private readonly less: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  has(item: T): boolean {
    return item.heapIndex >= 0 && this.items[item.heapIndex] === item;
  }

  push(item: T): void {
    item.heapIndex = this.items.length;
    this.items.push(item);
    this.siftUp(item.heapIndex);
  }

  pop(): T | undefined {
    const top = this.items[0];
    if (top) this.remove(top);
    return top;
  }

  /** Removes an item that is in the heap. */
  remove(item: T): void {
    const index = item.heapIndex;
    const last = this.items.pop() as T;
    item.heapIndex = -1;
    if (last === item) return;
    this.items[index] = last;
    last.heapIndex = index;
    this.restore(index);
  }

  /** Restores order after the key of an item in the heap changed. */
  update(item: T): void {
    this.restore(item.heapIndex);
  }

  private restore(index: number): void {
    if (index > 0 && this.less(this.items[index], this.items[(index - 1) >> 1])) this.siftUp(index);
    else this.siftDown(index);
  }

  private siftUp(index: number): void {
    const items = this.items;
    const item = items[index];
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = items[parentIndex];
      if (!this.less(item, parent)) break;
      items[index] = parent;
      parent.heapIndex = index;
      index = parentIndex;
    }
    items[index] = item;
    item.heapIndex = index;
  }

  private siftDown(index: number): void {
    const items = this.items;
    const length = items.length;
    const item = items[index];
    for (;;) {
      let child = 2 * index + 1;
      if (child >= length) break;
      if (child + 1 < length && this.less(items[child + 1], items[child])) child++;
      if (!this.less(items[child], item)) break;
      items[index] = items[child];
      items[index].heapIndex = index;
      index = child;
    }
    items[index] = item;
    item.heapIndex = index;
  }
}
