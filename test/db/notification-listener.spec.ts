import { NotificationListener } from '../../src/database/notification-listener';
import { poolOf } from '../../src/database/postgres-pool';
import { openDatabaseHarness, useHarness } from '../support/database-harness';
import { eventually } from '../support/eventually';
import { startTcpProxy } from '../support/tcp-proxy';

describe('NotificationListener (LISTEN on a dedicated connection, reconnecting)', () => {
  const harness = useHarness(() => openDatabaseHarness({ migrate: false }));

  async function listening(onReconnect: () => void = () => undefined) {
    const pool = poolOf(await harness().dataSource());
    if (!pool) throw new Error('no pool');
    const heard: Array<[string, string]> = [];
    const listener = new NotificationListener(pool, { channels: ['cluster_a', 'cluster_b'], backoff: { initialMs: 20, maxMs: 200 } }, {
      notified: (channel, payload) => heard.push([channel, payload]),
      reconnected: onReconnect,
    });
    harness().track(() => listener.close());
    await listener.start();
    return { listener, heard };
  }

  it('hears notifications on each of its channels, payload as sent, and nothing of other channels', async () => {
    const { listener, heard } = await listening();
    expect(listener.connected).toBe(true);
    await harness().sql(`SELECT pg_notify('cluster_a', 'one'), pg_notify('elsewhere', 'x'), pg_notify('cluster_b', '')`);
    await eventually(() => heard.length >= 2);
    expect(heard).toEqual([
      ['cluster_a', 'one'],
      ['cluster_b', ''],
    ]);
  });

  it('comes back after its session is terminated, LISTENs again and says so once', async () => {
    let reconnects = 0;
    const { listener, heard } = await listening(() => (reconnects += 1));
    const [{ pid }] = await harness().sql<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%' LIMIT 1`,
    );
    await harness().sql('SELECT pg_terminate_backend($1)', [pid]);
    await eventually(() => reconnects === 1 && listener.connected, 10_000, 'the reconnection');
    await harness().sql(`SELECT pg_notify('cluster_b', 'after')`);
    await eventually(() => heard.length === 1);
    expect(heard).toEqual([['cluster_b', 'after']]);
  });

  it('rejects start() when the server cannot be reached, and close() afterwards is harmless', async () => {
    const pool = poolOf(await harness().dataSource());
    if (!pool) throw new Error('no pool');
    const unreachable = { ...pool, options: { connectionString: 'postgres://nobody@127.0.0.1:1/none' } } as typeof pool;
    const listener = new NotificationListener(unreachable, { channels: ['cluster_a'] }, { notified: () => undefined });
    await expect(listener.start()).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(listener.connected).toBe(false);
    await listener.close();
  });
});

describe('NotificationListener closed while its server is gone', () => {
  const harness = useHarness(() => openDatabaseHarness({ migrate: false }));

  it('stops reconnecting once closed, even though the server never came back', async () => {
    const proxy = await startTcpProxy(harness().database.url);
    const pool = poolOf(await harness().dataSource({}, proxy.url));
    if (!pool) throw new Error('no pool');
    let reconnectAttempts = 0;
    const listener = new NotificationListener(pool, { channels: ['c'], backoff: { initialMs: 20, maxMs: 20 } }, { notified: () => undefined });
    (listener as unknown as { subscriber: { events: NodeJS.EventEmitter } }).subscriber.events.on('reconnect', () => (reconnectAttempts += 1));
    await listener.start();
    await proxy.sever();
    await eventually(() => reconnectAttempts >= 2, 5000, 'reconnection attempts');
    await listener.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const afterClose = reconnectAttempts;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(reconnectAttempts - afterClose).toBe(0);
  });
});
