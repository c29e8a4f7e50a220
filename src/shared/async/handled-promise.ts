const ignore = (): void => {};

/**
 * Marks a promise as handled so that its rejection is never reported as unhandled when the caller
 * drops it; a caller that awaits it still sees the rejection.
 */
export function handled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(ignore);
  return promise;
}

/** A rejected promise that is never reported as unhandled. */
export function rejectedWith<T = never>(reason: unknown): Promise<T> {
  return handled(Promise.reject(reason));
}

/** `next(make())`, where a throw of `make` becomes a rejected promise (never reported as unhandled) instead of a throw. */
export function thenOrRejected<V, T>(make: () => V, next: (value: V) => Promise<T>): Promise<T> {
  let value: V;
  try {
    value = make();
  } catch (error) {
    return rejectedWith(error);
  }
  return next(value);
}
