import { handled } from './handled-promise';

/**
 * Settles like `work`, or rejects with `signal.reason` as soon as `signal` aborts, whichever comes
 * first: a wait bound to an invocation stops when it ends, and a late result is discarded.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  handled(work);
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
