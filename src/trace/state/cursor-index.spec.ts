import fc from 'fast-check';
import { CursorIndex } from './cursor-index';

const filled = (cursors: number[]): CursorIndex<{ cursor: number }> => {
  const index = new CursorIndex<{ cursor: number }>();
  for (const cursor of cursors) index.push(cursor, { cursor });
  return index;
};
const cursorsAfter = (index: CursorIndex<{ cursor: number }>, after?: number): number[] => [...index.after(after)].map((item) => item.cursor);

describe('CursorIndex', () => {
  it('is empty at first', () => {
    const index = new CursorIndex<object>();
    expect(index.size).toBe(0);
    expect(index.oldest()).toBeUndefined();
    expect(index.oldestCursor).toBeUndefined();
    expect([...index.after(undefined)]).toEqual([]);
  });

  it('keeps items in cursor order and reports the oldest', () => {
    const index = filled([2, 5, 9]);
    expect(index.size).toBe(3);
    expect(index.oldestCursor).toBe(2);
    expect(index.oldest()).toEqual({ cursor: 2 });
    expect(cursorsAfter(index)).toEqual([2, 5, 9]);
  });

  it('refuses a cursor that is not above the newest one, even once emptied', () => {
    const index = filled([3]);
    expect(() => index.push(3, { cursor: 3 })).toThrow(RangeError);
    expect(() => index.push(1, { cursor: 1 })).toThrow(RangeError);
    index.delete(3);
    expect(() => index.push(2, { cursor: 2 })).toThrow(RangeError);
    index.push(4, { cursor: 4 });
    expect(cursorsAfter(index)).toEqual([4]);
  });

  it('pages strictly after a cursor, whether or not the cursor is held', () => {
    const index = filled([2, 5, 9, 12]);
    expect(cursorsAfter(index, 0)).toEqual([2, 5, 9, 12]);
    expect(cursorsAfter(index, 5)).toEqual([9, 12]);
    expect(cursorsAfter(index, 6)).toEqual([9, 12]);
    expect(cursorsAfter(index, 12)).toEqual([]);
    expect(cursorsAfter(index, 100)).toEqual([]);
  });

  it('deletes the oldest, and any other, and reports an absent cursor', () => {
    const index = filled([1, 2, 3, 4]);
    expect(index.delete(1)).toBe(true);
    expect(index.oldestCursor).toBe(2);
    expect(index.delete(3)).toBe(true);
    expect(index.delete(3)).toBe(false);
    expect(index.delete(7)).toBe(false);
    expect(index.delete(1)).toBe(false);
    expect(index.size).toBe(2);
    expect(cursorsAfter(index)).toEqual([2, 4]);
    expect(cursorsAfter(index, 2)).toEqual([4]);
  });

  it('moves the head past slots deleted in the middle once the oldest goes', () => {
    const index = filled([1, 2, 3, 4]);
    index.delete(2);
    index.delete(3);
    index.delete(1);
    expect(index.oldestCursor).toBe(4);
    expect(index.oldest()).toEqual({ cursor: 4 });
  });

  it('compacts when more than half is dead and still answers the same', () => {
    const cursors = Array.from({ length: 100 }, (_, i) => i + 1);
    const index = filled(cursors);
    for (const cursor of cursors) if (cursor % 3 !== 0) index.delete(cursor);
    expect(index.size).toBe(33);
    expect(cursorsAfter(index)).toEqual(cursors.filter((c) => c % 3 === 0));
    expect(cursorsAfter(index, 50)).toEqual(cursors.filter((c) => c % 3 === 0 && c > 50));
    index.push(101, { cursor: 101 });
    expect(cursorsAfter(index, 98)).toEqual([99, 101]);
  });

  it('matches a plain sorted list under any mix of pushes and deletions (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.nat(40), fc.nat(60)), { maxLength: 300 }), (ops) => {
        const index = new CursorIndex<{ cursor: number }>();
        let model: number[] = [];
        let next = 0;
        for (const [push, pick, probe] of ops) {
          if (push || model.length === 0) {
            next += 1 + (pick % 3);
            index.push(next, { cursor: next });
            model.push(next);
          } else {
            const victim = model[pick % model.length];
            expect(index.delete(victim)).toBe(true);
            model = model.filter((c) => c !== victim);
          }
          expect(index.size).toBe(model.length);
          expect(index.oldestCursor).toBe(model[0]);
          expect(cursorsAfter(index, probe)).toEqual(model.filter((c) => c > probe));
        }
        expect(cursorsAfter(index)).toEqual(model);
      }),
    );
  });
});
