import { ManualClock } from '../shared/time/manual-clock';
import { finishWithRetry } from './finish-retry';
import type { InvocationRecord } from './invocation-record';
import { LedgerError, type LedgerErrorCode } from './ledger.errors';

const TOKEN = '00000000-0000-4000-8000-000000000001';
const record = (phase: string, owned = false) => ({ invocation_id: 'inv', phase, owned }) as unknown as InvocationRecord;

/** A ledger whose finish answers the scripted codes in turn (a record once the script says 'ok'). */
function scripted(codes: Array<LedgerErrorCode | 'ok'>, stored: InvocationRecord | null = null) {
  const calls: number[] = [];
  const clock = new ManualClock();
  const ledger = {
    finish: async () => {
      calls.push(clock.monotonicNow());
      const code = codes[Math.min(calls.length - 1, codes.length - 1)];
      if (code === 'ok') return record('completed');
      throw new LedgerError(code);
    },
    get: async () => stored,
  };
  return { ledger, calls, clock };
}

async function drive<T>(clock: ManualClock, promise: Promise<T>): Promise<T | LedgerError> {
  let settled = false;
  const outcome = promise.then(
    (value) => ((settled = true), value),
    (error: LedgerError) => ((settled = true), error),
  );
  for (let i = 0; i < 200 && !settled; i++) {
    for (let j = 0; j < 10; j++) await Promise.resolve();
    clock.advance(50);
  }
  return outcome;
}

describe('finishWithRetry', () => {
  it('retries transaction_aborted and ledger_unavailable with doubling pauses on the clock, then answers the record', async () => {
    const { ledger, calls, clock } = scripted(['transaction_aborted', 'ledger_unavailable', 'ok']);
    const result = await drive(clock, finishWithRetry(ledger, 'inv', TOKEN, 'completed', null, undefined, { clock }));
    expect(result).toMatchObject({ phase: 'completed' });
    expect(calls.map((t) => t - calls[0])).toEqual([0, 100, 300]);
  });

  it('is bounded: after the attempts the last failure is thrown', async () => {
    const { ledger, calls, clock } = scripted(['transaction_aborted']);
    const result = await drive(clock, finishWithRetry(ledger, 'inv', TOKEN, 'completed', null, undefined, { clock }));
    expect((result as LedgerError).code).toBe('transaction_aborted');
    expect(calls).toHaveLength(4);
    expect(calls[3] - calls[0]).toBe(100 + 200 + 400);
    expect(clock.pendingTimers).toBe(0);
  });

  it('is bounded in time: no retry starts whose pause would end after maxElapsedMs', async () => {
    const { ledger, calls, clock } = scripted(['ledger_unavailable']);
    await drive(clock, finishWithRetry(ledger, 'inv', TOKEN, 'completed', null, undefined, { clock, attempts: 100, maxElapsedMs: 1000 }));
    // pauses 100, 200, 400 fit in 1000 ms; the next one (800) would not
    expect(calls).toHaveLength(4);
  });

  it('never retries a fence refusal or a bad argument', async () => {
    for (const code of ['stale_owner', 'lease_expired', 'not_found', 'invalid_finish_arguments'] as const) {
      const { ledger, calls, clock } = scripted([code], record('completed'));
      expect(((await drive(clock, finishWithRetry(ledger, 'inv', TOKEN, 'completed', null, undefined, { clock }))) as LedgerError).code).toBe(code);
      expect(calls).toHaveLength(1);
    }
  });

  it('on a retry, stale_owner counts as done only when the record shows the requested terminal phase and no owner', async () => {
    const done = scripted(['transaction_aborted', 'stale_owner'], record('completed'));
    expect(await drive(done.clock, finishWithRetry(done.ledger, 'inv', TOKEN, 'completed', null, undefined, { clock: done.clock }))).toMatchObject({ phase: 'completed' });
    for (const stored of [record('failed'), record('running', true), null]) {
      const other = scripted(['transaction_aborted', 'stale_owner'], stored);
      const result = await drive(other.clock, finishWithRetry(other.ledger, 'inv', TOKEN, 'completed', null, undefined, { clock: other.clock }));
      expect((result as LedgerError).code).toBe('stale_owner');
    }
  });
});
