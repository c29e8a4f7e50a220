import { LinkedList, type ListNode } from './linked-list';

class Node implements ListNode<Node> {
  prev: Node | null = null;
  next: Node | null = null;
  constructor(readonly value: number) {}
}

const values = (list: LinkedList<Node>) => [...list].map((node) => node.value);

describe('LinkedList', () => {
  it('appends at the tail and iterates from the head', () => {
    const list = new LinkedList<Node>();
    [1, 2, 3].forEach((value) => list.push(new Node(value)));
    expect(values(list)).toEqual([1, 2, 3]);
    expect(list.size).toBe(3);
    expect(list.head?.value).toBe(1);
    expect(list.tail?.value).toBe(3);
  });

  it('removes the head, a middle node and the tail by handle', () => {
    const list = new LinkedList<Node>();
    const nodes = [1, 2, 3, 4, 5].map((value) => new Node(value));
    nodes.forEach((node) => list.push(node));
    list.remove(nodes[2]);
    expect(values(list)).toEqual([1, 2, 4, 5]);
    list.remove(nodes[0]);
    expect(list.head).toBe(nodes[1]);
    expect(nodes[1].prev).toBeNull();
    list.remove(nodes[4]);
    expect(list.tail).toBe(nodes[3]);
    expect(nodes[3].next).toBeNull();
    expect(values(list)).toEqual([2, 4]);
    expect(list.size).toBe(2);
    expect([...list].reverse().map((node) => node.value)).toEqual(walkBack(list));
  });

  it('clears the links of a removed node and empties completely', () => {
    const list = new LinkedList<Node>();
    const a = new Node(1);
    const b = new Node(2);
    list.push(a);
    list.push(b);
    list.remove(a);
    expect(a.prev).toBeNull();
    expect(a.next).toBeNull();
    list.remove(b);
    expect(list.head).toBeNull();
    expect(list.tail).toBeNull();
    expect(list.size).toBe(0);
    expect(values(list)).toEqual([]);
  });

  it('accepts a removed node again at the tail', () => {
    const list = new LinkedList<Node>();
    const a = new Node(1);
    list.push(a);
    list.push(new Node(2));
    list.remove(a);
    list.push(a);
    expect(values(list)).toEqual([2, 1]);
    expect(walkBack(list)).toEqual([1, 2]);
  });
});

function walkBack(list: LinkedList<Node>): number[] {
  const out: number[] = [];
  for (let node = list.tail; node; node = node.prev) out.push(node.value);
  return out;
}
