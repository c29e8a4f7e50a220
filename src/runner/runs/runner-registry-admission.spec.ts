import { AdmissionController } from '../../admission/admission-controller';
import { RunRegistry } from './run-registry';
import type { RunStreamItem } from './run-registry.types';
import { countingTool, makeRunner, scriptedAgent } from '../testing/runner-harness';

async function terminalOf(registry: RunRegistry, runId: string): Promise<RunStreamItem> {
  let last: RunStreamItem | undefined;
  for await (const item of registry.subscribe(runId)) last = item;
  return last as RunStreamItem;
}

async function until(condition: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 200 && !condition(); attempt += 1) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(condition()).toBe(true);
}

describe('admission of server-owned runs (spec 03 §6.1, §9)', () => {
  test('a queued run cancelled by run id leaves the queue empty and ends cancelled with its reason; the active one returns its slot when cancelled', async () => {
    const controller = new AdmissionController({ globalLimit: 1, defaultAgentLimit: 1, overflow: 'queue', maxQueue: 4 });
    const blocking = countingTool('wait', (_args, ctx) => new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve(null), { once: true })));
    const agent = scriptedAgent([{ toolCalls: [{ id: 'w1', name: 'wait', args: {} }] }, { text: 'never' }, { text: 'never' }], { tools: [blocking.tool] });
    const registry = new RunRegistry({ runners: [makeRunner({ agent, admission: { controller } })] });

    const active = await registry.start({ agent: agent.name, userId: 'u-1', message: 'hold the slot' });
    await until(() => blocking.executions.length === 1);
    const queued = await registry.start({ agent: agent.name, userId: 'u-2', message: 'wait behind it' });
    await until(() => controller.status().queue_length === 1);
    expect((await registry.get(queued.run_id)).status).toBe('pending');

    await registry.cancel(queued.run_id, 'user_gave_up');
    expect(await terminalOf(registry, queued.run_id)).toMatchObject({ type: 'terminal', status: 'cancelled', cancelled: 'user_gave_up' });
    await until(() => controller.status().queue_length === 0);
    expect(controller.status().active).toBe(1);

    await registry.cancel(active.run_id, 'done_waiting');
    expect(await terminalOf(registry, active.run_id)).toMatchObject({ status: 'cancelled', cancelled: 'done_waiting' });
    await until(() => controller.status().active === 0);
    expect(controller.status()).toMatchObject({ active: 0, queue_length: 0 });
  });
});
