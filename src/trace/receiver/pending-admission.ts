/**
 * The pending-admission counter a store shares with its receivers (spec 06 §7): deliveries handed
 * off and not yet run (`pending`, at most `max`) and deliveries dropped before the hand-off. A
 * receiver touches nothing else of the store synchronously. Package-internal: the store accepts a
 * delivery only with its own instance, which nobody outside can obtain.
 */
export class PendingAdmission {
  readonly #brand = true;
  pending = 0;
  dropped = 0;

  constructor(readonly max: number) {
    Object.seal(this);
  }

  /** Brand check (a private field), not a shape check: a look-alike with the same fields fails. */
  static isPendingAdmission(value: unknown): value is PendingAdmission {
    return typeof value === 'object' && value !== null && #brand in value;
  }
}
