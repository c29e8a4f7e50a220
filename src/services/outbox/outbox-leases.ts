import { RuntimeServiceError } from '../runtime-service.errors';
import { releaseLostClaims, type ClaimedJob } from './outbox-claims';
import type { OutboxContext } from './outbox-context';
import { completeJob, failJob, type SettleFence } from './outbox-settle';

/** The write the owner of a lease meant to make: a completion, or a failure with its code. */
export type PendingSettle = { readonly kind: 'complete' } | { readonly kind: 'fail'; readonly code: string };

export const COMPLETE: PendingSettle = Object.freeze({ kind: 'complete' });
/** The settle of a delivery abandoned by its owner (the outbox stopped, or its events could not be read): back to `retry_wait`, or `failed` on its last attempt. */
export const OWNER_GONE: PendingSettle = Object.freeze({ kind: 'fail', code: 'memory_outbox_owner_gone' });

/** Writes `settle` for `job` under `fence`; false when the lease was no longer this instance's. */
export async function writeSettle(context: OutboxContext, job: ClaimedJob, settle: PendingSettle, fence: SettleFence): Promise<boolean> {
  if (settle.kind === 'complete') return completeJob(context, job, fence);
  return (await failJob(context, job, settle.code, fence)) !== null;
}

/**
 * The leases this instance claimed whose settle has not landed: the write failed on the database
 * until its retries ran out, or the outbox stopped with the delivery in flight; and the claims that
 * failed without an answer, which may have committed leases nobody here knows. One object per
 * supervisor, shared by the outboxes of its generations, so the next generation ends the rows the
 * previous one left `running` as soon as the database answers, instead of waiting for their lease
 * to end and another claim. Writes are fenced on the token: a token still in place proves no other
 * claimant took the job since; a taken job is simply forgotten.
 */
export class HeldLeases {
  readonly #held = new Map<string, { readonly job: ClaimedJob; readonly settle: PendingSettle }>();
  readonly #lostClaims = new Set<string>();
  #reconciling: Promise<number> | null = null;

  /** Leases held (lost claims not counted). */
  get leases(): number {
    return this.#held.size;
  }

  /** Leases and lost claims held. */
  get size(): number {
    return this.#held.size + this.#lostClaims.size;
  }

  /** A claim that failed without an answer: whatever it may have committed is released by the next pass. */
  holdLostClaim(claimId: string): void {
    this.#lostClaims.add(claimId);
  }

  hold(job: ClaimedJob, settle: PendingSettle): void {
    this.#held.set(job.leaseToken, { job, settle });
  }

  /**
   * Writes every held settle in turn; the first database failure ends the pass with the rest kept
   * (the database is still away). Resolves with how many were written or found taken. One pass at a time.
   */
  reconcile(context: OutboxContext): Promise<number> {
    this.#reconciling ??= this.#pass(context).finally(() => {
      this.#reconciling = null;
    });
    return this.#reconciling;
  }

  async #pass(context: OutboxContext): Promise<number> {
    let ended = 0;
    if (this.#lostClaims.size > 0) {
      const claimIds = [...this.#lostClaims];
      try {
        ended += await releaseLostClaims(context, claimIds);
      } catch (error) {
        if (RuntimeServiceError.isRuntimeServiceError(error)) return ended;
        throw error;
      }
      for (const claimId of claimIds) this.#lostClaims.delete(claimId);
    }
    for (const [token, { job, settle }] of [...this.#held]) {
      try {
        await writeSettle(context, job, settle, 'token');
      } catch (error) {
        if (RuntimeServiceError.isRuntimeServiceError(error)) return ended;
        throw error;
      }
      this.#held.delete(token);
      ended += 1;
    }
    return ended;
  }
}
