import { BOOKKEEPING_FAILED, RouterTransitions } from './router-transitions';

const microtasks = () => new Promise((resolve) => setImmediate(resolve));

describe('RouterTransitions', () => {
  it('runs effects after the transition, in order, including ones pushed by a nested transition', () => {
    const order: string[] = [];
    const transitions = new RouterTransitions(undefined);
    const result = transitions.operate(() => {
      transitions.push(() => {
        order.push('a');
        transitions.operate(() => transitions.push(() => order.push('c')));
        order.push('a-end');
      });
      transitions.push(() => order.push('b'));
      order.push('transition');
      return 42;
    });
    expect(result).toBe(42);
    expect(order).toEqual(['transition', 'a', 'a-end', 'b', 'c']);
  });

  it('lets a caller transition throw after flushing its effects', () => {
    const ran: string[] = [];
    const transitions = new RouterTransitions(undefined);
    expect(() =>
      transitions.operate(() => {
        transitions.push(() => ran.push('effect'));
        throw new RangeError('refused');
      }),
    ).toThrow(RangeError);
    expect(ran).toEqual(['effect']);
  });

  it('reports a throwing effect or guarded transition once, in a later microtask, and keeps running the rest', async () => {
    const reasons: string[] = [];
    const ran: string[] = [];
    const transitions = new RouterTransitions((reason) => {
      reasons.push(reason);
      throw new Error('the listener fails too');
    });
    transitions.guard(() => {
      transitions.push(() => {
        throw new Error('boom');
      });
      transitions.push(() => ran.push('after'));
    });
    transitions.guard(() => {
      throw new Error('again');
    });
    expect(ran).toEqual(['after']);
    expect(reasons).toEqual([]);
    await microtasks();
    expect(reasons).toEqual([BOOKKEEPING_FAILED]);
  });
});
