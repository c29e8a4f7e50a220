import { RuntimeMetrics } from '../../../src/observability/metrics/runtime-metrics';
import { META, useLedgerHarness } from '../../support/ledger-harness';
import { parseExposition, seriesOf, valueOf } from '../../../src/observability/metrics/testing/exposition';

describe('ledger operations by outcome, from a real ledger on Postgres', () => {
  const h = useLedgerHarness();

  test('ok and refused operations are counted under their operation and code, with durations', async () => {
    const metrics = new RuntimeMetrics();
    const ledger = await h().ledger(undefined, { events: metrics });
    await ledger.create('inv-metrics', META, null);
    await expect(ledger.create('inv-metrics', META, null)).rejects.toMatchObject({ code: 'already_exists' });
    await ledger.get('inv-metrics');
    await ledger.get('inv-missing');
    const text = await metrics.metrics();
    const samples = parseExposition(text);
    expect(seriesOf(samples, 'agent_runtime_ledger_operations_total')).toEqual({
      'operation=create,outcome=ok': 1,
      'operation=create,outcome=already_exists': 1,
      'operation=get,outcome=ok': 2,
    });
    expect(valueOf(samples, 'agent_runtime_ledger_operation_duration_seconds_count', { operation: 'create' })).toBe(2);
    expect(text).not.toContain('inv-metrics');
  });
});
