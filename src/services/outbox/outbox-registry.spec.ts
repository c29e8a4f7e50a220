import { systemClock } from '../../shared/time/clock';
import { RuntimeServiceError } from '../runtime-service.errors';
import { OutboxRegistry } from './outbox-registry';

const target = { addEvents: async () => ({ added: 0, duplicates: 0 }) };

describe('§6.4 hydration barrier', () => {
  it('is hydrated by the first registration; ids are sorted', async () => {
    const registry = new OutboxRegistry();
    expect(registry.hydrated).toBe(false);
    const waiting = registry.waitHydrated(5000, systemClock);
    registry.register('zeta', target);
    registry.register('alpha', target);
    await expect(waiting).resolves.toBeUndefined();
    expect(registry.ids()).toEqual(['alpha', 'zeta']);
    expect(registry.target('alpha')).toBe(target);
  });

  it('not hydrated within the timeout → start failed with memory_outbox_registry_not_hydrated', async () => {
    const error = await new OutboxRegistry().waitHydrated(10, systemClock).catch((e: unknown) => e);
    expect(RuntimeServiceError.isRuntimeServiceError(error) && error.code).toBe('runtime_service_bundle_start_failed');
    expect((error as RuntimeServiceError).details).toEqual({ stage: 'memory_outbox', reason: 'memory_outbox_registry_not_hydrated' });
  });

  it('refuses a malformed id or target', () => {
    const registry = new OutboxRegistry();
    expect(() => registry.register('has space', target)).toThrow(TypeError);
    expect(() => registry.register('ok', {} as never)).toThrow(TypeError);
    expect(registry.hydrated).toBe(false);
  });
});
