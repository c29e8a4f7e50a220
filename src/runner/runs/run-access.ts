import type { Principal } from '../../http/principal';
import { RunnerError } from '../runner.errors';
import type { RunStatusRecord } from './run-registry.types';

/** What a principal does with a run. */
export type RunAction = 'read' | 'follow' | 'list' | 'cancel' | 'confirm';

/** A run's status record with the principal that started it (`null` for a run started without one). */
export interface OwnedRun extends RunStatusRecord {
  readonly owner_principal: string | null;
}

/**
 * The app's rule for principals that do not own a run: `true` allows `action` (e.g. `confirm` for
 * a principal with an approver role). Owners need no rule.
 */
export type AuthorizeRun = (principal: Principal, action: RunAction, run: OwnedRun) => boolean | Promise<boolean>;

/**
 * Who may act on a run: its owner, and whoever `authorizeRun` allows. Everyone else is told the run
 * does not exist (`run_not_found`), so a run's existence does not leak. Shared by the `/runs` routes
 * and the console.
 */
export class RunAccess {
  constructor(private readonly authorize: AuthorizeRun | undefined) {}

  /** True when `principal` may do `action` on `run`; a throwing or non-boolean hook is `false`. */
  async allows(principal: Principal, action: RunAction, run: OwnedRun): Promise<boolean> {
    if (run.owner_principal !== null && run.owner_principal === principal.id) return true;
    if (this.authorize === undefined) return false;
    try {
      return (await this.authorize(principal, action, run)) === true;
    } catch {
      return false;
    }
  }

  /** `run` when allowed; else `run_not_found`, as for an unknown run. */
  async check(principal: Principal, action: RunAction, run: OwnedRun): Promise<OwnedRun> {
    if (!(await this.allows(principal, action, run))) throw new RunnerError('run_not_found');
    return run;
  }

  /** The runs of `runs` the principal may do `action` on, in their order. */
  async filter<T extends OwnedRun>(principal: Principal, action: RunAction, runs: readonly T[]): Promise<T[]> {
    const allowed: T[] = [];
    for (const run of runs) if (await this.allows(principal, action, run)) allowed.push(run);
    return allowed;
  }
}
