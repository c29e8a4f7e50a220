import { handled } from './handled-promise';

/**
 * Settles like `work`, or rejects with `signal.reason` as soon as `signal` aborts, whichever comes
 * first: a wait bound to an invocation stops when it ends, and a late result is discarded.
 * `onLate` is called once if `work` settles after the abort won (never with its value or error), so
 * a caller can count what it abandoned.
 *
 * @example
 * const response = await untilAborted(Promise.resolve().then(() => model.generate(request, signal)), signal);
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal, onLate?: (outcome: 'resolved' | 'rejected') => void): Promise<T> {
  handled(work);
  if (signal.aborted) {
    if (onLate !== undefined) notifyLate(work, onLate);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    let abandoned = false;
    const onAbort = () => {
      abandoned = true;
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        if (abandoned) onLate?.('resolved');
        else resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        if (abandoned) onLate?.('rejected');
        else reject(error);
      },
    );
  });
}

function notifyLate(work: Promise<unknown>, onLate: (outcome: 'resolved' | 'rejected') => void): void {
  work.then(
    () => onLate('resolved'),
    () => onLate('rejected'),
  );
}
