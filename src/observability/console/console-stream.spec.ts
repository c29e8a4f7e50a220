import { systemClock } from '../../shared/time/clock';
import { snapshotEvents, type SnapshotMessage } from './console-stream';
import type { ConsoleSnapshot } from './console-snapshot.types';

const snapshotWith = (runs: number): ConsoleSnapshot =>
  Object.freeze({ schema_version: 1, admission: null, runs: Array.from({ length: runs }, () => ({}) as never), confirmations: null, denials: { status: 'no_postgres_audit_log' as const } });

const until = async (check: () => boolean, timeoutMs = 5_000) => {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

describe('snapshotEvents (the console stream)', () => {
  test('a snapshot at once, another only when it changed, heartbeats in between, nothing after unsubscribe', async () => {
    let runs = 0;
    let looks = 0;
    const source = async () => {
      looks += 1;
      return snapshotWith(runs);
    };
    const messages: SnapshotMessage[] = [];
    const subscription = snapshotEvents(source, { clock: systemClock, refreshMs: 5, heartbeatMs: 60 }).subscribe((message) => messages.push(message));

    await until(() => messages.length === 1);
    expect(messages[0]).toEqual({ id: '1', type: 'snapshot', data: JSON.stringify(snapshotWith(0)) });
    await until(() => looks >= 4);
    expect(messages.filter((message) => message.type === 'snapshot')).toHaveLength(1);

    await until(() => messages.some((message) => message.type === 'heartbeat'));
    expect(messages.find((message) => message.type === 'heartbeat')).toEqual({ type: 'heartbeat', data: '' });

    runs = 2;
    await until(() => messages.filter((message) => message.type === 'snapshot').length === 2);
    expect(messages.filter((message) => message.type === 'snapshot').at(-1)).toEqual({ id: '2', type: 'snapshot', data: JSON.stringify(snapshotWith(2)) });

    subscription.unsubscribe();
    const looked = looks;
    const sent = messages.length;
    runs = 5;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(looks).toBeLessThanOrEqual(looked + 1);
    expect(messages).toHaveLength(sent);
  });
});
