import { Logger } from '@nestjs/common';
import { ManualClock } from '../shared/time/manual-clock';
import type { InvocationLedger } from '../ledger/invocation-ledger';
import { LedgerError } from '../ledger/ledger.errors';
import { LeaseRecoveryService, leaseRecoverySettings } from './lease-recovery.service';

const flush = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

function setup(batches: Array<number | LedgerError>) {
  const clock = new ManualClock();
  const limits: number[] = [];
  let call = 0;
  const ledger = {
    recoverExpired: async ({ limit }: { limit: number }) => {
      limits.push(limit);
      const next = batches[Math.min(call++, batches.length - 1)];
      if (next instanceof LedgerError) throw next;
      return Array.from({ length: next }, (_, i) => `secret-id-${i}`);
    },
  } as unknown as InvocationLedger;
  const service = new LeaseRecoveryService(ledger, { intervalMs: 1000, batchSize: 10, maxBatches: 3, clock });
  const logs: string[] = [];
  jest.spyOn(Logger.prototype, 'log').mockImplementation((message: unknown) => void logs.push(String(message)));
  jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => void logs.push(String(message)));
  return { clock, limits, service, logs };
}

afterEach(() => jest.restoreAllMocks());

describe('LeaseRecoveryService', () => {
  it('sweeps at start, in batches until one comes back short, and logs the count only', async () => {
    const { limits, service, logs } = setup([10, 4, 0]);
    await service.onApplicationBootstrap();
    expect(limits).toEqual([10, 10]);
    expect(logs).toEqual(['recovered 14 invocations whose lease had expired']);
    await service.onApplicationShutdown();
  });

  it('bounds one sweep to maxBatches calls', async () => {
    const { limits, service } = setup([10]);
    expect(await service.sweep()).toBe(30);
    expect(limits).toHaveLength(3);
  });

  it('sweeps again every intervalMs on the clock, and stops on shutdown', async () => {
    const { clock, limits, service } = setup([0]);
    await service.onApplicationBootstrap();
    expect(limits).toHaveLength(1);
    clock.advance(999);
    await flush();
    expect(limits).toHaveLength(1);
    clock.advance(1);
    await flush();
    expect(limits).toHaveLength(2);
    clock.advance(1000);
    await flush();
    expect(limits).toHaveLength(3);
    await service.onApplicationShutdown();
    expect(clock.pendingTimers).toBe(0);
    clock.advance(10_000);
    await flush();
    expect(limits).toHaveLength(3);
  });

  it('a failing sweep logs its code without ids or stack and keeps the schedule', async () => {
    const { clock, limits, service, logs } = setup([new LedgerError('ledger_unavailable', { sqlstate: '57P01', socket_error: null }), 2]);
    await service.onApplicationBootstrap();
    expect(logs).toEqual(['lease recovery failed: ledger_unavailable; recovered 0 before']);
    clock.advance(1000);
    await flush();
    expect(limits).toHaveLength(2);
    expect(logs[1]).toBe('recovered 2 invocations whose lease had expired');
    expect(logs.join('\n')).not.toContain('secret-id');
    await service.onApplicationShutdown();
  });

  it('reads its interval from LEASE_RECOVERY_INTERVAL_MS (default 30 s)', () => {
    expect(leaseRecoverySettings({}).intervalMs).toBe(30_000);
    expect(leaseRecoverySettings({ LEASE_RECOVERY_INTERVAL_MS: '250' }).intervalMs).toBe(250);
    expect(leaseRecoverySettings({ LEASE_RECOVERY_INTERVAL_MS: 'soon' }).intervalMs).toBe(30_000);
  });
});
