import type { InvocationLedger } from '../../src/ledger/invocation-ledger';
import type { TerminalPhase } from '../../src/ledger/invocation-record';
import { ledgerError, META, rawRow, useLedgerHarness } from '../support/ledger-harness';

const T = 1_000_000;

describe('§3 phases', () => {
  const h = useLedgerHarness();

  async function running(ledger: InvocationLedger, id: string, now = T, leaseMs = 10) {
    await ledger.create(id, META, { step: 0 }, { now: now - 1 });
    return ledger.claim(id, { leaseMs, now });
  }

  it('ready is claimable', async () => {
    const ledger = await h().ledger();
    await ledger.create('inv', META, null, { now: T });
    const { invocation } = await ledger.claim('inv', { leaseMs: 10, now: T });
    expect(invocation).toMatchObject({ phase: 'running', owned: true, revision: 1 });
  });

  it('running is invocation_owned while now < lease_until_ms: claim at t with lease 10, a second claimant at t+9 is refused, at t+10 succeeds', async () => {
    const first = await h().ledger();
    const second = await h().ledger();
    const claimed = await running(first, 'inv', T, 10);
    expect(claimed.invocation.lease_until_ms).toBe(T + 10);
    await ledgerError(second.claim('inv', { leaseMs: 10, now: T + 9 }), 'invocation_owned');
    await ledgerError(first.claim('inv', { leaseMs: 10, now: T + 9 }), 'invocation_owned');
    const taken = await second.claim('inv', { leaseMs: 10, now: T + 10 });
    expect(taken.ownerToken).not.toBe(claimed.ownerToken);
    expect(taken.invocation).toMatchObject({ phase: 'running', owner_instance: second.instanceId, lease_until_ms: T + 20, revision: 2 });
  });

  it.each<TerminalPhase>(['failed', 'paused', 'cancelled', 'timed_out'])('%s is re-claimable, and the claim clears the outcome', async (phase) => {
    const ledger = await h().ledger();
    const { ownerToken } = await running(ledger, 'inv');
    const finished = await ledger.finish('inv', ownerToken, phase, { reason: 'why' }, undefined, { now: T + 1 });
    expect(finished.outcome).not.toBeNull();
    const again = await ledger.claim('inv', { leaseMs: 10, now: T + 2 });
    expect(again.invocation).toMatchObject({ phase: 'running', outcome: null, owned: true, revision: 3 });
  });

  it('completed is absorbing: a claim gets completed, fenced writes get stale_owner, and nothing changes', async () => {
    const ledger = await h().ledger();
    const { ownerToken } = await running(ledger, 'inv');
    await ledger.finish('inv', ownerToken, 'completed', { answer: 42 }, { step: 9 }, { now: T + 1 });
    const before = await rawRow(h(), 'inv');
    await ledgerError(ledger.claim('inv', { leaseMs: 10, now: T + 5 }), 'completed');
    await ledgerError(ledger.claim('inv', { leaseMs: 10, now: T + 10_000_000 }), 'completed');
    await ledgerError(ledger.renew('inv', ownerToken, { leaseMs: 10, now: T + 2 }), 'stale_owner');
    await ledgerError(ledger.checkpoint('inv', ownerToken, { step: 10 }, { leaseMs: 10, now: T + 2 }), 'stale_owner');
    await ledgerError(ledger.finish('inv', ownerToken, 'failed', null, undefined, { now: T + 2 }), 'stale_owner');
    expect(await rawRow(h(), 'inv')).toEqual(before);
    expect(before).toMatchObject({ phase: 'completed', revision: '2' });
  });

  it('a phase outside the five terminal ones is invalid_terminal_phase (details.phase) and changes nothing', async () => {
    const ledger = await h().ledger();
    const { ownerToken } = await running(ledger, 'inv');
    const before = await rawRow(h(), 'inv');
    for (const phase of ['running', 'ready', 'done']) {
      await ledgerError(ledger.finish('inv', ownerToken, phase as TerminalPhase, null, undefined, { now: T + 1 }), 'invalid_terminal_phase', { phase });
    }
    await ledgerError(ledger.finish('inv', ownerToken, 42 as unknown as TerminalPhase, null, undefined), 'invalid_terminal_phase', { phase: null });
    await ledgerError(ledger.finish('inv', ownerToken, 'Secret Text' as TerminalPhase, null, undefined), 'invalid_terminal_phase', { phase: null });
    expect(await rawRow(h(), 'inv')).toEqual(before);
  });
});
