import type { AdmissionService } from './admission-service';
import type { AdmissionRequestState } from './admission.constants';
import { AdmissionError } from './admission.errors';
import type { Permit } from './permit';

/**
 * The one object the guard keeps per admitted request. Its `AbortController` is created only when
 * something needs a signal: the controller while the request may queue, a disconnect, or a handler
 * reading `@AdmissionSignal()`; most requests are granted at once, answered and released without one.
 */
export class AdmittedRequest implements AdmissionRequestState {
  permit!: Permit;
  done = false;
  interceptorAttached = false;
  /** Set when the client went before the response was written. */
  disconnected = false;
  #abort: AbortController | undefined = undefined;
  #reason: unknown = undefined;
  #watchesPermit = false;

  /** The disconnect side alone: what the controller watches while the request is queued. */
  get disconnectSignal(): AbortSignal {
    if (this.#abort === undefined) {
      this.#abort = new AbortController();
      if (this.disconnected) this.#abort.abort(this.#reason);
    }
    return this.#abort.signal;
  }

  /** Disconnect, then permit revocation, whichever comes first (the order of `AbortSignal.any`). */
  get signal(): AbortSignal {
    const signal = this.disconnectSignal;
    if (!this.#watchesPermit) {
      this.#watchesPermit = true;
      const revoked = this.permit.signal;
      if (revoked.aborted) this.#abort?.abort(revoked.reason);
      else revoked.addEventListener('abort', () => this.#abort?.abort(revoked.reason), { once: true });
    }
    return signal;
  }

  /** The client went before the response was completely written. */
  disconnect(): void {
    if (this.disconnected) return;
    this.disconnected = true;
    this.#reason = new AdmissionError('cancelled');
    this.#abort?.abort(this.#reason);
  }
}

/** Releases the request's permit once; later calls do nothing. */
export function releaseOnce(controller: AdmissionService, state: AdmissionRequestState): void {
  if (state.done) return;
  state.done = true;
  controller.release(state.permit);
}
