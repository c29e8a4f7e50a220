/** A node of an intrusive doubly linked list; the list owns the `prev`/`next` fields. */
export interface ListNode<T> {
  prev: T | null;
  next: T | null;
}

/** Intrusive doubly linked list: append, remove-by-node and shift in O(1). */
export class LinkedList<T extends ListNode<T>> {
  head: T | null = null;
  tail: T | null = null;
  size = 0;

  push(node: T): void {
    node.prev = this.tail;
    node.next = null;
    if (this.tail) this.tail.next = node;
    else this.head = node;
    this.tail = node;
    this.size++;
  }

  /** Removes a node that is in this list. */
  remove(node: T): void {
    if (node.prev) node.prev.next = node.next;
    else this.head = node.next;
    if (node.next) node.next.prev = node.prev;
    else this.tail = node.prev;
    node.prev = null;
    node.next = null;
    this.size--;
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (let node = this.head; node; node = node.next) yield node;
  }
}
