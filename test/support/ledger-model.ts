import type { InvocationPhase } from '../../src/ledger/invocation-record';

/** The reference model of one ledger row (spec 04 §3, §5, §6) with every instance alive. */
export interface ModelRow {
  phase: InvocationPhase;
  token: string | null;
  owner: number | null;
  lease: number;
  revision: number;
  checkpoint: unknown;
}

/** A command of the model-based property: times are offsets added to the running clock. */
export type LedgerCommand =
  | { op: 'create'; dt: number; checkpoint: unknown }
  | { op: 'claim'; instance: number; dt: number; lease: number }
  | { op: 'renew'; token: number; dt: number; lease: number }
  | { op: 'checkpoint'; token: number; dt: number; lease: number; checkpoint: unknown }
  | { op: 'finish'; token: number; dt: number; phase: string; checkpoint: unknown }
  | { op: 'delete'; instance: number; dt: number };

/** What the model predicts: `ok`, or the code (`false` for a delete of a missing row). */
export type Prediction = 'ok' | 'false' | string;

const TERMINAL = new Set(['completed', 'failed', 'timed_out', 'cancelled', 'paused']);

export class LedgerModel {
  row: ModelRow | null = null;

  /** Applies a command at `now` and returns the predicted outcome; `token` is the token a successful claim uses. */
  apply(command: LedgerCommand, now: number, tokenOf: (index: number) => string, claimToken: string): Prediction {
    const row = this.row;
    switch (command.op) {
      case 'create':
        if (row) return 'already_exists';
        this.row = { phase: 'ready', token: null, owner: null, lease: 0, revision: 0, checkpoint: command.checkpoint };
        return 'ok';
      case 'claim':
        if (!row) return 'not_found';
        if (row.phase === 'completed') return 'completed';
        // every instance of the property is alive, so a running row is only free when its lease has ended
        if (row.phase === 'running' && now < row.lease) return 'invocation_owned';
        Object.assign(row, { phase: 'running', token: claimToken, owner: command.instance, lease: now + command.lease, revision: row.revision + 1 });
        return 'ok';
      case 'delete':
        if (!row) return 'false';
        if (row.phase === 'running' && now < row.lease) return 'invocation_owned';
        this.row = null;
        return 'ok';
      case 'finish':
        if (!TERMINAL.has(command.phase)) return 'invalid_terminal_phase';
        return this.fenced(tokenOf(command.token), now, (r) => {
          Object.assign(r, { phase: command.phase, token: null, owner: null, lease: 0 });
          if (command.checkpoint !== undefined) r.checkpoint = command.checkpoint;
        });
      case 'renew':
        return this.fenced(tokenOf(command.token), now, (r) => (r.lease = now + command.lease));
      case 'checkpoint':
        return this.fenced(tokenOf(command.token), now, (r) => Object.assign(r, { lease: now + command.lease, checkpoint: command.checkpoint }));
    }
  }

  private fenced(token: string, now: number, write: (row: ModelRow) => void): Prediction {
    const row = this.row;
    if (!row) return 'not_found';
    if (row.phase !== 'running' || row.token !== token) return 'stale_owner';
    if (now >= row.lease) return 'lease_expired';
    write(row);
    row.revision += 1;
    return 'ok';
  }
}
