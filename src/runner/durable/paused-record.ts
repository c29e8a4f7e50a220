import { finishWithRetry } from '../../ledger/finish-retry';
import { LedgerError } from '../../ledger/ledger.errors';
import { isValidId } from '../../shared/ids/id-rule';
import { RunnerError } from '../runner.errors';
import type { ResolvedRunnerOptions } from '../runner-options';

/** Ends the `paused` ledger row of a cancelled durable invocation `cancelled`; any other row is left as it is. */
export async function endPausedRecord(options: Pick<ResolvedRunnerOptions, 'ledger' | 'clock'>, invocationId: string): Promise<void> {
  const { ledger, clock } = options;
  if (!ledger || !isValidId(invocationId)) return;
  try {
    const row = await ledger.get(invocationId);
    if (row?.phase !== 'paused') return;
    const claimed = await ledger.claim(invocationId, { leaseMs: ledger.defaultLeaseMs });
    await finishWithRetry(ledger, invocationId, claimed.ownerToken, 'cancelled', { status: 'cancelled', error_code: 'cancelled' }, claimed.invocation.checkpoint, { clock });
  } catch (error) {
    throw new RunnerError('ledger_failed', { reason: LedgerError.isLedgerError(error) ? error.code : 'ledger_unavailable' });
  }
}
