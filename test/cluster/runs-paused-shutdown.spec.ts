import { ScriptedModel } from '../../src/runner/models/scripted-model';
import { InMemoryRunStore } from '../../src/runner/runs/stores/in-memory-run-store';
import { openDatabaseHarness, useHarness } from '../support/database-harness';
import { eventually } from '../support/eventually';
import { AGENT, startInstance, stepTool } from './runs-cluster-harness';

/** Issue 23 item 6: on the in-memory run store a durable run paused at shutdown does not leave its ledger row `paused`. */
describe('in-memory run store: a durable run paused at shutdown', () => {
  const harness = useHarness(() => openDatabaseHarness(), 'each');

  it('is cancelled (reason shutdown) and its ledger row ends cancelled', async () => {
    const h = harness();
    const store = new InMemoryRunStore();
    const a = await startInstance(h, 'paused-a', {
      durable: true,
      agent: { name: AGENT, model: new ScriptedModel([{ toolCalls: [{ id: 'c1', name: 'step', args: { n: 'c1' } }] }]), tools: [stepTool([], undefined, { requireConfirmation: true })] },
      registry: { store },
    });
    const { run_id: runId } = await a.registry.start({ agent: AGENT, userId: 'u-1', message: 'go', durable: true });
    await eventually(async () => (await a.registry.get(runId)).status === 'paused', 5000, 'the run pauses');
    const { invocation_id: invocationId } = await a.registry.get(runId);
    await a.registry.shutdown();
    expect(await a.registry.get(runId)).toMatchObject({ status: 'cancelled', error: { code: 'cancelled', details: { reason: 'shutdown' } } });
    const rows = await h.sql<{ phase: string; outcome: unknown; owner_token: string | null }>('SELECT phase, outcome, owner_token FROM agent_runtime_invocations WHERE id = $1', [invocationId]);
    expect(rows).toEqual([{ phase: 'cancelled', outcome: { reason: 'cancelled' }, owner_token: null }]);
  });
});
