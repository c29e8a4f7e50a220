import { Observable } from 'rxjs';
import type { Clock } from '../../shared/time/clock';
import { sleep } from '../../shared/time/timeout';
import { SSE_HEARTBEAT_MS } from '../../runner/runs/run-events-sse';
import type { ConsoleSnapshot } from './console-snapshot.types';

/** One message of the stream, in the shape Nest's `@Sse()` writes (its `MessageEvent`). */
export interface SnapshotMessage {
  readonly id?: string;
  readonly type: 'snapshot' | 'heartbeat';
  readonly data: string;
}

/** Settings of {@link snapshotEvents}. */
export interface SnapshotStreamSettings {
  readonly clock: Clock;
  /** Pause between two looks at the snapshot. */
  readonly refreshMs: number;
  /** @default 15000, as the run streams */
  readonly heartbeatMs?: number;
}

/**
 * The console stream as an `@Sse()` observable: `event: snapshot` messages (`id:` 1, 2, ...; `data:`
 * the snapshot as JSON), the first at once, then one whenever the snapshot differs from the last one
 * sent, looked at every `refreshMs`. After `heartbeatMs` without a message an `event: heartbeat`
 * goes out, so proxies keep the stream open. Unsubscribing (the client left) stops the loop.
 */
export function snapshotEvents(snapshot: () => Promise<ConsoleSnapshot>, settings: SnapshotStreamSettings): Observable<SnapshotMessage> {
  const heartbeatMs = settings.heartbeatMs ?? SSE_HEARTBEAT_MS;
  return new Observable<SnapshotMessage>((subscriber) => {
    const gone = new AbortController();
    const loop = async () => {
      let sent = '';
      let id = 0;
      let quietSince = settings.clock.monotonicNow();
      while (!gone.signal.aborted) {
        const data = JSON.stringify(await snapshot());
        const now = settings.clock.monotonicNow();
        if (gone.signal.aborted) return;
        if (data !== sent) {
          sent = data;
          id += 1;
          subscriber.next({ id: String(id), type: 'snapshot', data });
          quietSince = now;
        } else if (now - quietSince >= heartbeatMs) {
          subscriber.next({ type: 'heartbeat', data: '' });
          quietSince = now;
        }
        await sleep(settings.refreshMs, settings.clock, gone.signal);
      }
    };
    // the only rejection is the abort of the sleep when the client left
    loop().catch(() => undefined);
    return () => gone.abort();
  });
}
