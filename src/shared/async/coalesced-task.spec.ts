import { CoalescedTask } from './coalesced-task';

describe('CoalescedTask', () => {
  it('runs once per trigger when idle, and once more (not once per trigger) for triggers during a run', async () => {
    let runs = 0;
    let release!: () => void;
    const tracked: Array<Promise<void>> = [];
    const task = new CoalescedTask(async () => {
      runs += 1;
      if (runs === 1) await new Promise<void>((resolve) => (release = resolve));
    }, (run) => tracked.push(run));
    task.trigger();
    task.trigger();
    task.trigger();
    expect(runs).toBe(1);
    release();
    await Promise.all(tracked);
    expect(runs).toBe(2);
    expect(tracked).toHaveLength(1);
    task.trigger();
    await Promise.all(tracked);
    expect(runs).toBe(3);
  });

  it('swallows a failing run and runs again at the next trigger', async () => {
    let runs = 0;
    const tracked: Array<Promise<void>> = [];
    const task = new CoalescedTask(async () => {
      runs += 1;
      throw new Error('store down');
    }, (run) => tracked.push(run));
    task.trigger();
    await Promise.all(tracked);
    task.trigger();
    await Promise.all(tracked);
    expect(runs).toBe(2);
  });
});
