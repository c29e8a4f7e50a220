import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { ManualClock } from '../shared/time/manual-clock';
import { advisoryLockKey, InstanceLock, type LockConnection } from './instance-lock';

/** A fake lock connection: answers `pg_try_advisory_lock` with what the test says, can be killed. */
class FakeConnection extends EventEmitter implements LockConnection {
  ended = false;
  /** Heartbeats (`SELECT 1`) stay unanswered while true. */
  silent = false;
  queries: string[] = [];
  constructor(
    private readonly server: FakeServer,
    readonly hangs = false,
  ) {
    super();
  }
  async query(text: string, values?: unknown[]) {
    this.queries.push(text);
    if (this.ended) throw new Error('Connection terminated');
    if (this.hangs) return new Promise<never>(() => {});
    if (text.includes('pg_try_advisory_lock')) return { rows: [{ locked: this.server.grant(values?.[0] as string, this) }] };
    if (this.silent) return new Promise<never>(() => {});
    return { rows: [{ '?column?': 1 }] };
  }
  async end() {
    this.ended = true;
    this.server.release(this);
  }
  kill() {
    this.ended = true;
    this.server.release(this);
    this.emit('error', new Error('terminating connection due to administrator command'));
    this.emit('end');
  }
}

class FakeServer {
  holders = new Map<string, FakeConnection>();
  refuseConnections = false;
  opened: FakeConnection[] = [];
  grant(key: string, connection: FakeConnection): boolean {
    const holder = this.holders.get(key);
    if (holder && holder !== connection) return false;
    this.holders.set(key, connection);
    return true;
  }
  release(connection: FakeConnection) {
    for (const [key, holder] of this.holders) if (holder === connection) this.holders.delete(key);
  }
  open = async (): Promise<FakeConnection> => {
    if (this.refuseConnections) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const connection = new FakeConnection(this);
    this.opened.push(connection);
    return connection;
  };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('advisoryLockKey', () => {
  it('is the first 8 bytes, signed big-endian, of SHA-256 over <namespace>:<id>', () => {
    const digest = createHash('sha256').update('agent_runtime.eval.owner:main').digest();
    expect(advisoryLockKey('agent_runtime.eval.owner', 'main')).toBe(digest.readBigInt64BE(0).toString());
    expect(advisoryLockKey('a', 'b:c')).toBe(advisoryLockKey('a:b', 'c'));
    expect(advisoryLockKey('a', 'b')).not.toBe(advisoryLockKey('b', 'a'));
  });
});

describe('InstanceLock', () => {
  function setup() {
    const server = new FakeServer();
    const clock = new ManualClock();
    const lock = new InstanceLock(server.open, '42', clock, { initialMs: 100, maxMs: 5000 });
    return { server, clock, lock };
  }

  it('takes the lock on its own connection; a second holder of the key is refused', async () => {
    const { server, clock, lock } = setup();
    await lock.connect();
    expect(await lock.acquire()).toBe(true);
    expect(lock.held).toBe(true);
    const other = new InstanceLock(server.open, '42', clock);
    await other.connect();
    expect(await other.acquire()).toBe(false);
    expect(other.held).toBe(false);
  });

  it('when the connection is lost it is no longer held, and it reconnects with backoff 100 ms doubling to 5 s, retaking the same key', async () => {
    const { server, clock, lock } = setup();
    await lock.connect();
    await lock.acquire();
    const delays: number[] = [];
    const setTimer = clock.setTimer.bind(clock);
    jest.spyOn(clock, 'setTimer').mockImplementation((fn, ms) => (delays.push(ms), setTimer(fn, ms)));
    server.refuseConnections = true;
    server.opened[0].kill();
    expect(lock.held).toBe(false);
    for (let i = 0; i < 8; i++) {
      clock.advance(delays[delays.length - 1]);
      await flush();
    }
    expect(delays).toEqual([100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000]);
    expect(lock.held).toBe(false);
    server.refuseConnections = false;
    clock.advance(5000);
    await flush();
    expect(lock.held).toBe(true);
    expect(server.holders.get('42')).toBe(server.opened[1]);
  });

  it('keeps retrying while the old session still holds the key, and succeeds once it is gone', async () => {
    const { server, clock, lock } = setup();
    await lock.connect();
    await lock.acquire();
    const zombie = new FakeConnection(server);
    const first = server.opened[0];
    first.kill();
    server.holders.set('42', zombie);
    clock.advance(100);
    await flush();
    await flush();
    expect(lock.held).toBe(false);
    server.holders.delete('42');
    clock.advance(200);
    await flush();
    await flush();
    expect(lock.held).toBe(true);
  });

  it('close() ends the connection, releases the key and stops reconnecting', async () => {
    const { server, clock, lock } = setup();
    await lock.connect();
    await lock.acquire();
    server.opened[0].kill();
    await lock.close();
    clock.advance(60_000);
    await flush();
    expect(server.opened).toHaveLength(1);
    expect(lock.held).toBe(false);
    expect(clock.pendingTimers).toBe(0);
  });

  it('ping answers true only while held and the connection answers within the timeout', async () => {
    const { server, clock, lock } = setup();
    expect(await lock.ping(1000)).toBe(false);
    await lock.connect();
    await lock.acquire();
    expect(await lock.ping(1000)).toBe(true);
    const hanging = new InstanceLock(async () => new FakeConnection(server, true), '43', clock);
    await hanging.connect();
    (hanging as unknown as { isHeld: boolean }).isHeld = true;
    const answer = hanging.ping(1000);
    clock.advance(1000);
    expect(await answer).toBe(false);
  });

  describe('with a grace (lock confirmation)', () => {
    function confirmed(onAcquired?: (client: LockConnection) => Promise<void>) {
      const server = new FakeServer();
      const clock = new ManualClock(0);
      const lock = new InstanceLock(server.open, '42', clock, { initialMs: 100, maxMs: 100 }, { graceMs: 400, ...(onAcquired && { onAcquired }) });
      const events: string[] = [];
      lock.onEvent((event) => events.push(`${event}@${clock.monotonicNow()}`));
      return { server, clock, lock, events };
    }

    it('stays confirmed while the heartbeat (every grace/4) answers; lapses grace after the last answered heartbeat was sent', async () => {
      const { server, clock, lock, events } = confirmed();
      await lock.connect();
      await lock.acquire();
      for (let i = 0; i < 8; i++) {
        clock.advance(100);
        await flush();
      }
      expect(lock.confirmed).toBe(true);
      expect(server.opened[0].queries.filter((text) => text === 'SELECT 1')).toHaveLength(8);
      server.opened[0].silent = true;
      // the last answered heartbeat was sent at 800: the lapse comes at 1200 (+1 ms of the timer), still held
      clock.advance(399);
      await flush();
      expect(lock.confirmed).toBe(true);
      clock.advance(2);
      expect(events).toEqual(['lapsed@1201']);
      expect(lock.held).toBe(true);
      expect(lock.confirmed).toBe(false);
    });

    it('a lost connection is reported at once; the lapse follows by the clock unless the lock is retaken in time', async () => {
      const { server, clock, lock, events } = confirmed();
      await lock.connect();
      await lock.acquire();
      server.refuseConnections = true;
      server.opened[0].kill();
      expect(events).toEqual(['lost@0']);
      clock.advance(401);
      await flush();
      expect(events).toEqual(['lost@0', 'lapsed@401']);
      server.refuseConnections = false;
      clock.advance(100);
      await flush();
      await flush();
      expect(lock.confirmed).toBe(true);
      expect(events).toEqual(['lost@0', 'lapsed@401', 'confirmed@501']);
      // retaken within the grace: no lapse at all
      server.opened[server.opened.length - 1].kill();
      clock.advance(100);
      await flush();
      await flush();
      clock.advance(400);
      expect(lock.confirmed).toBe(true);
      expect(events.slice(3)).toEqual(['lost@501']);
    });

    it('a lapse the timer has not reported yet is reported by checkConfirmed, and before a late confirmation', async () => {
      const { server, clock, lock, events } = confirmed();
      await lock.connect();
      await lock.acquire();
      server.opened[0].silent = true;
      // an event loop that stood still: the time passed, no timer ran
      jest.spyOn(clock, 'monotonicNow').mockReturnValue(1000);
      expect(lock.checkConfirmed()).toBe(false);
      expect(events).toEqual(['lapsed@1000']);
      expect(lock.checkConfirmed()).toBe(false);
      expect(events).toHaveLength(1);
    });

    it('reports the lapse although its timer fires before the grace ran out by the clock (a timer armed late in a long loop turn)', async () => {
      const { server, clock, lock, events } = confirmed();
      await lock.connect();
      // Node counts a timer from the loop's cached time, which lags monotonicNow() late in a long turn: the
      // lapse timer armed at the acquisition (the first timer it sets) counts from 50 ms too early
      const setTimer = clock.setTimer.bind(clock);
      jest.spyOn(clock, 'setTimer').mockImplementationOnce((fn, ms) => setTimer(fn, ms - 50));
      await lock.acquire();
      server.refuseConnections = true;
      server.opened[0].kill();
      expect(events).toEqual(['lost@0']);
      // the first firing, 50 ms early, finds the grace not yet over
      clock.advance(360);
      expect(events).toEqual(['lost@0']);
      clock.advance(100);
      expect(events).toEqual(['lost@0', 'lapsed@401']);
    });

    it('runs onAcquired on the lock connection before the lock counts as held; its failure fails the acquisition', async () => {
      const seen: unknown[] = [];
      const { server, lock } = confirmed(async (client) => {
        seen.push(client);
      });
      await lock.connect();
      expect(await lock.acquire()).toBe(true);
      expect(seen).toEqual([server.opened[0]]);
      const other = confirmed(async () => {
        throw new Error('register failed');
      });
      await other.lock.connect();
      await expect(other.lock.acquire()).rejects.toThrow('register failed');
      expect(other.lock.held).toBe(false);
    });
  });
});
