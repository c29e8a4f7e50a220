import { AgentRuntimeError } from '../../shared/errors/agent-runtime-error';

/**
 * The pause before the next attempt after failed attempt `attempts` (1-based, spec 07 §6.4):
 * `min(backoffMaxMs, backoffBaseMs · 2^(attempts − 1))` plus up to 10 % of it as jitter, drawn from
 * `random` (uniform in [0, 1)). Whole milliseconds.
 *
 * @example
 * retryDelayMs(3, { backoffBaseMs: 250, backoffMaxMs: 30_000 }, () => 0.5); // 1000 + 50
 */
export function retryDelayMs(attempts: number, settings: { readonly backoffBaseMs: number; readonly backoffMaxMs: number }, random: () => number): number {
  const base = Math.min(settings.backoffMaxMs, settings.backoffBaseMs * 2 ** Math.max(0, attempts - 1));
  const draw = random();
  const unit = Number.isFinite(draw) ? Math.min(Math.max(draw, 0), 1) : 0;
  return base + Math.floor(base * 0.1 * unit);
}

/** Codes that may be stored as `last_error`: snake_case, as every code of the package. */
const ERROR_CODE = /^[a-z][a-z0-9_]{0,63}$/;

/**
 * What `last_error` records of a failed delivery: the code of an error of this package, or
 * `memory_outbox_delivery_failed` for anything else (its text is never kept).
 */
export function deliveryErrorCode(error: unknown): string {
  if (!AgentRuntimeError.isAgentRuntimeError(error)) return 'memory_outbox_delivery_failed';
  return ERROR_CODE.test(error.code) ? error.code : 'memory_outbox_delivery_failed';
}
