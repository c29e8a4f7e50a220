import type { ServerResponse } from 'node:http';
import type { Clock } from '../../shared/time/clock';
import type { RunStreamItem } from './run-registry.types';
import type { RunSubscription } from './run-subscription';

/** How often a comment line keeps an idle stream open through proxies (spec 03 §10). */
export const SSE_HEARTBEAT_MS = 15_000;

/** Headers of the event stream; `X-Accel-Buffering` stops nginx from holding items back. */
export const SSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
});

const HEARTBEAT = ': heartbeat\n\n';

/** One item as an SSE message: `id:` its seq, `event:` its type, `data:` the item as one line of JSON. */
export function sseFrame(item: RunStreamItem): string {
  return `id: ${item.seq}\nevent: ${item.type}\ndata: ${JSON.stringify(item)}\n\n`;
}

/** What {@link pipeRunEvents} writes to: a `ServerResponse`, or a stand-in in tests. */
export type SseTarget = Pick<ServerResponse, 'write' | 'end' | 'once' | 'off' | 'writableEnded' | 'destroyed'>;

/**
 * Writes a subscription to an already opened event stream until the terminal item, then ends the
 * response. A heartbeat comment goes out every `heartbeatMs`. When the client goes (`close`), only
 * this subscriber detaches: the run goes on. A failure after the headers (the subscriber fell
 * behind the buffer, the run expired) ends the stream; a client reconnecting with `Last-Event-ID`
 * is then told why (410, 404).
 */
export async function pipeRunEvents(subscription: RunSubscription, out: SseTarget, settings: { readonly clock: Clock; readonly heartbeatMs?: number }): Promise<void> {
  const { clock } = settings;
  const heartbeatMs = settings.heartbeatMs ?? SSE_HEARTBEAT_MS;
  let gone = false;
  const onClose = () => {
    gone = true;
    void subscription.return();
  };
  out.once('close', onClose);
  let timer: unknown;
  const beat = () => {
    if (gone || out.writableEnded || out.destroyed) return;
    out.write(HEARTBEAT);
    timer = clock.setTimer(beat, heartbeatMs);
  };
  timer = clock.setTimer(beat, heartbeatMs);
  try {
    for await (const item of subscription) {
      if (gone || out.destroyed) break;
      if (!out.write(sseFrame(item))) await drained(out);
    }
  } catch {
    // the stream just ends: see above
  } finally {
    clock.clearTimer(timer);
    out.off('close', onClose);
    if (!out.writableEnded && !out.destroyed) out.end();
  }
}

/** Resolves once the buffered output has drained, or the connection closed. */
function drained(out: SseTarget): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      out.off('drain', done);
      out.off('close', done);
      resolve();
    };
    out.once('drain', done);
    out.once('close', done);
  });
}
