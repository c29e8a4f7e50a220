import { AdmissionError } from './admission.errors';
import type { WorkReport } from './flow/adaptive-limit';
import { readOwnData } from '../shared/options/option-reader';

export type { WorkReport };

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
  /**
   * Corrects the estimated `cost` with the actual usage (spec 09 §5): the scopes' cost-rate buckets
   * get `cost − actualCost` back (or owe it). At most once, while held or after revocation; a second
   * call or a value that is not finite ≥ 0 throws `AdmissionError('invalid_settle')`.
   */
  settle(actualCost: number): undefined;
  /**
   * Reports how the work went (spec 09 §6), for an agent with an adaptive limit: `overloaded` (the
   * model provider answered 429 or 503, or slowed down) lowers its effective limit, `ok` reports let
   * it grow back. At most once; a bad value or a second call throws `AdmissionError('invalid_report')`.
   */
  report(report: WorkReport): undefined;
  /** Releases the permit and ignores the result, so `using permit = await controller.acquire(...)` works. */
  [Symbol.dispose](): void;
}

/** Aborts a permit's signal (at once when somebody holds it, else when it is first read). */
export let revokePermit: (permit: IssuedPermit, outcome: RevocationOutcome) => void;
/** Whether somebody holds the permit's signal, so aborting it runs listeners: a side effect to schedule. */
export let isPermitObserved: (permit: IssuedPermit) => boolean;
/** A brand check: the very object a controller issued (a look-alike or a prototype copy is not). */
let isIssuedPermit: (value: unknown) => value is IssuedPermit;
/** The issuer's record behind a permit it issued; `undefined` for anything else (a look-alike included). */
export let issuerRecordOf: (value: unknown) => unknown;

/**
 * The permit the controller issues: a frozen object whose `signal` is created on first read, because
 * most permits are released without anybody watching it. The revoke side is module-private.
 */
export class IssuedPermit implements Permit {
  #controller: AbortController | undefined = undefined;
  #outcome: RevocationOutcome | undefined = undefined;
  #settled = false;
  #reported = false;
  readonly #issuer: PermitIssuer;
  readonly #record: unknown;

  static {
    revokePermit = (permit, outcome) => {
      permit.#outcome = outcome;
      permit.#controller?.abort(revokedReason(outcome));
    };
    isPermitObserved = (permit) => permit.#controller !== undefined;
    isIssuedPermit = (value): value is IssuedPermit => typeof value === 'object' && value !== null && #record in value;
    issuerRecordOf = (value) => (typeof value === 'object' && value !== null && #record in value ? (value as IssuedPermit).#record : undefined);
  }

  constructor(
    readonly id: string,
    readonly agentId: string,
    readonly requestRef: string,
    issuer: PermitIssuer,
    record: unknown,
  ) {
    this.#issuer = issuer;
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

  settle(actualCost: number): undefined {
    if (!isIssuedPermit(this) || this.#settled || typeof actualCost !== 'number' || !(actualCost >= 0 && actualCost < Infinity)) {
      throw new AdmissionError('invalid_settle');
    }
    this.#settled = true;
    this.#issuer.settle(this.#record, actualCost);
    return undefined;
  }

  report(report: WorkReport): undefined {
    const read = !isIssuedPermit(this) || this.#reported ? undefined : readReport(report);
    if (read === undefined) throw new AdmissionError('invalid_report');
    this.#reported = true;
    this.#issuer.report(this.#record, read);
    return undefined;
  }

  [Symbol.dispose](): void {
    this.#issuer.release(this);
  }
}

/** What a permit calls back on the controller that issued it. */
export interface PermitIssuer {
  release(permit: Permit): unknown;
  /** Records a settled cost for the request `record` (synchronous; the cluster applies it at its next decision). */
  settle(record: unknown, actualCost: number): void;
  /** Records a work report for the request `record`. */
  report(record: unknown, report: WorkReport): void;
}

/** A frozen copy of a valid report, read without running user code; `undefined` for anything else. */
function readReport(value: unknown): WorkReport | undefined {
  const own = readOwnData(value, ['outcome', 'latencyMs'] as const);
  if (own === null || own.accessors.length > 0) return undefined;
  const { outcome, latencyMs } = own.values;
  if (outcome !== 'ok' && outcome !== 'overloaded') return undefined;
  if (latencyMs !== undefined && !(typeof latencyMs === 'number' && latencyMs >= 0 && latencyMs < Infinity)) return undefined;
  return Object.freeze(latencyMs === undefined ? { outcome } : { outcome, latencyMs });
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
