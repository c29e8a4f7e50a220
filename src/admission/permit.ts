import { AdmissionError } from './admission.errors';

/**
 * Capacity granted by an `AdmissionController`. Frozen; only the very object the controller issued
 * is accepted back by `release`.
 */
export interface Permit {
  /** `'permit-'` and 24 URL-safe characters; opaque. */
  readonly id: string;
  readonly agentId: string;
  /** The request this permit was granted to (`'request-'` and 24 URL-safe characters). */
  readonly requestRef: string;
  /**
   * Aborts exactly once, when the permit is revoked (release, cancel or owner abort); its reason is
   * `AdmissionError('permit_revoked')` with `details.outcome`. Work should stop when it aborts.
   */
  readonly signal: AbortSignal;
  /** Releases the permit and ignores the result, so `using permit = await controller.acquire(...)` works. */
  [Symbol.dispose](): void;
}

/** Aborts a permit's signal (at once when somebody holds it, else when it is first read). */
export let revokePermit: (permit: IssuedPermit, outcome: RevocationOutcome) => void;
/** Whether somebody holds the permit's signal, so aborting it runs listeners: a side effect to schedule. */
export let isPermitObserved: (permit: IssuedPermit) => boolean;
/** The issuer's record behind a permit it issued; `undefined` for anything else (a look-alike included). */
export let issuerRecordOf: (value: unknown) => unknown;

/**
 * The permit the controller issues: a frozen object whose `signal` is created on first read, because
 * most permits are released without anybody watching it. The revoke side is module-private.
 */
export class IssuedPermit implements Permit {
  #controller: AbortController | undefined = undefined;
  #outcome: RevocationOutcome | undefined = undefined;
  readonly #release: (permit: Permit) => unknown;
  readonly #record: unknown;

  static {
    revokePermit = (permit, outcome) => {
      permit.#outcome = outcome;
      permit.#controller?.abort(revokedReason(outcome));
    };
    isPermitObserved = (permit) => permit.#controller !== undefined;
    issuerRecordOf = (value) => (typeof value === 'object' && value !== null && #record in value ? (value as IssuedPermit).#record : undefined);
  }

  constructor(
    readonly id: string,
    readonly agentId: string,
    readonly requestRef: string,
    release: (permit: Permit) => unknown,
    record: unknown,
  ) {
    this.#release = release;
    this.#record = record;
    Object.freeze(this);
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#outcome) this.#controller.abort(revokedReason(this.#outcome));
    }
    return this.#controller.signal;
  }

  [Symbol.dispose](): void {
    this.#release(this);
  }
}

/** How a permit ended. */
export type RevocationOutcome = 'released' | 'cancelled' | 'owner_down';

const revokedReasons = new Map<RevocationOutcome, AdmissionError>();

/** One frozen reason per outcome: building an error (and its stack) on every release is the bulk of its cost. */
function revokedReason(outcome: RevocationOutcome): AdmissionError {
  let reason = revokedReasons.get(outcome);
  if (!reason) {
    reason = new AdmissionError('permit_revoked', { outcome });
    Object.freeze(reason);
    revokedReasons.set(outcome, reason);
  }
  return reason;
}

/** The string `id` of a permit-like value; anything else (a throwing getter included) throws `invalid_permit`. */
export function permitIdOf(permit: unknown): string {
  try {
    const id = typeof permit === 'object' && permit !== null ? (permit as { id?: unknown }).id : undefined;
    if (typeof id === 'string') return id;
  } catch {
    // a throwing getter is just not a permit
  }
  throw new AdmissionError('invalid_permit');
}
