import { RunWatchers } from './run-watchers';

describe('RunWatchers', () => {
  it('wakes the watchers of a notified run only, and reads <run_id>:<seq> with colons in the id', () => {
    const watchers = new RunWatchers();
    const woken: string[] = [];
    watchers.watch('run:a', () => woken.push('a'));
    watchers.watch('run-b', () => woken.push('b'));
    watchers.notified('run:a:3');
    watchers.notified('run-b');
    watchers.notified('run-b:x');
    watchers.notified(':1');
    expect(woken).toEqual(['a']);
  });

  it('the poll wakes once for an unknown seq, then only when the seq moved or the run is gone', () => {
    const watchers = new RunWatchers();
    let woken = 0;
    watchers.watch('run-a', () => woken++);
    watchers.polled('run-a', 2);
    watchers.polled('run-a', 2);
    expect(woken).toBe(1);
    watchers.notified('run-a:3');
    watchers.polled('run-a', 3);
    expect(woken).toBe(2);
    watchers.polled('run-a', -1);
    expect(woken).toBe(3);
  });

  it('unwatching the last watcher forgets the run; a throwing watcher does not stop the others', () => {
    const watchers = new RunWatchers();
    let woken = 0;
    const unwatchThrowing = watchers.watch('run-a', () => {
      throw new Error('watcher failed');
    });
    const unwatch = watchers.watch('run-a', () => woken++);
    watchers.wakeAll();
    expect(woken).toBe(1);
    unwatch();
    unwatchThrowing();
    expect(watchers.runIds()).toEqual([]);
  });
});
