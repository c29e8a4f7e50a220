import type { Permit } from './permit';

/**
 * Reports the model calls of one invocation on its permit (spec 09 §6), at most once: the first
 * call the provider answered 429 or 503 as `overloaded` at once, else the last call as `ok` when the
 * invocation ends. A permit without `report` (a controller of the application's own) is left alone,
 * and a refused report (the permit already reported) is ignored.
 */
export class ModelCallReports {
  #permit: Permit | null = null;
  #reported = false;
  #lastLatencyMs: number | undefined;

  /** The invocation's permit, once granted. */
  attach(permit: Permit | null): void {
    this.#permit = permit;
  }

  /** A model call ended after `latencyMs`; `overloaded` when the provider answered 429 or 503. */
  modelCallEnded(latencyMs: number, overloaded: boolean): void {
    const elapsed = Math.max(0, latencyMs);
    if (overloaded) this.#report('overloaded', elapsed);
    else this.#lastLatencyMs = elapsed;
  }

  /** The invocation ended: reports `ok` for its last model call unless it reported already. */
  finish(): void {
    if (this.#lastLatencyMs !== undefined) this.#report('ok', this.#lastLatencyMs);
  }

  #report(outcome: 'ok' | 'overloaded', latencyMs: number): void {
    const permit = this.#permit;
    if (this.#reported || permit === null || typeof permit.report !== 'function') return;
    this.#reported = true;
    try {
      permit.report({ outcome, latencyMs });
    } catch {
      // reported already by the application, or a controller that refuses reports
    }
  }
}

/** Whether an HTTP status says the provider is overloaded: 429 or 503. */
export function isOverloadStatus(status: unknown): boolean {
  return status === 429 || status === 503;
}

/**
 * Whether an SDK's error says the model provider answered 429 or 503: the `status` / `statusCode` it
 * carries (`@google/genai`'s `ApiError`, the AI SDK's `APICallError`), or its `RetryError`'s
 * `lastError`. Reads plain properties only.
 */
export function isProviderOverloadError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { status, statusCode, lastError } = error as { status?: unknown; statusCode?: unknown; lastError?: unknown };
  if (isOverloadStatus(status) || isOverloadStatus(statusCode)) return true;
  return lastError !== undefined && lastError !== error && typeof lastError === 'object' && lastError !== null && isOverloadStatus((lastError as { statusCode?: unknown }).statusCode);
}
