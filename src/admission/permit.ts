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

/**
 * The abort side of a permit. The `AbortController` is created on first use of `permit.signal`,
 * because most permits are released without anybody watching their signal.
 */
export class PermitSignalSource {
  private controller: AbortController | undefined;
  private outcome: RevocationOutcome | undefined;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.outcome) this.controller.abort(revokedReason(this.outcome));
    }
    return this.controller.signal;
  }

  /** Aborts the signal (now if anybody holds it, else when it is first read). */
  revoke(outcome: RevocationOutcome): void {
    this.outcome = outcome;
    this.controller?.abort(revokedReason(outcome));
  }
}

/** How a permit ended. */
export type RevocationOutcome = 'released' | 'cancelled' | 'owner_down';

function revokedReason(outcome: RevocationOutcome): AdmissionError {
  return new AdmissionError('permit_revoked', { outcome });
}

/** Builds the frozen permit object handed to callers. */
export function createPermit(
  id: string,
  agentId: string,
  requestRef: string,
  source: PermitSignalSource,
  release: (permit: Permit) => unknown,
): Permit {
  const permit: Permit = Object.freeze({
    id,
    agentId,
    requestRef,
    get signal() {
      return source.signal;
    },
    [Symbol.dispose]() {
      release(permit);
    },
  });
  return permit;
}
