const abortedGetter = Object.getOwnPropertyDescriptor(AbortSignal.prototype, 'aborted')?.get;

/**
 * True for a genuine `AbortSignal`: an object that merely inherits from its prototype, or a Proxy of
 * one, fails the internal-slot check of the `aborted` getter.
 */
export function isAbortSignal(value: unknown): value is AbortSignal {
  if (!(value instanceof AbortSignal)) return false;
  try {
    abortedGetter?.call(value);
    return true;
  } catch {
    return false;
  }
}
