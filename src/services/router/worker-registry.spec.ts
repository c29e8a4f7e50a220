import { LeaseRecord } from './scope-lease';
import { WorkerRegistry } from './worker-registry';

function installed(registry: WorkerRegistry<unknown>, key: string, now: number) {
  const creation = registry.reserve(key, now);
  if (creation === null) throw new Error('no slot');
  registry.install(creation, now);
  return creation.worker;
}

describe('WorkerRegistry', () => {
  it('counts installed workers and reserved slots as active scopes', () => {
    const registry = new WorkerRegistry({ capacity: 2, reclaim: false, idleScopeTimeoutMs: 10 });
    const creation = registry.reserve('a', 0);
    expect(registry.activeScopes).toBe(1);
    expect(registry.live('a')).toBeUndefined();
    expect(registry.creationOf('a')).toBe(creation);
    installed(registry, 'b', 0);
    expect(registry.activeScopes).toBe(2);
    expect(registry.reserve('c', 1000)).toBeNull();
    registry.drop(creation!);
    expect(registry.activeScopes).toBe(1);
    expect(creation!.worker.state).toBe('retired');
  });

  it('gives every worker a new incarnation', () => {
    const registry = new WorkerRegistry({ capacity: 2, reclaim: true, idleScopeTimeoutMs: 10 });
    const first = installed(registry, 'a', 0);
    const other = installed(registry, 'b', 0);
    const second = installed(registry, 'a', 100);
    expect(new Set([first.incarnation, other.incarnation, second.incarnation]).size).toBe(3);
  });

  it('reclaims the least recently accessed unused worker idle for the timeout, at most one per reservation', () => {
    const registry = new WorkerRegistry({ capacity: 3, reclaim: true, idleScopeTimeoutMs: 10 });
    const a = installed(registry, 'a', 0);
    const b = installed(registry, 'b', 1);
    const c = installed(registry, 'c', 2);
    registry.touch(a, 3);
    b.leases.add(new LeaseRecord(b, undefined));
    expect(registry.reserve('d', 12)).not.toBeNull();
    expect(c.state).toBe('retired');
    expect(b.state).toBe('live');
    expect(registry.idleEvictions).toBe(1);
    expect(registry.activeScopes).toBe(3);
    expect(registry.reserve('e', 12)).toBeNull();
    expect(registry.reserve('e', 13)).not.toBeNull();
    expect(a.state).toBe('retired');
    expect(registry.idleEvictions).toBe(2);
  });

  it('clear retires every worker and creation', () => {
    const registry = new WorkerRegistry({ capacity: 3, reclaim: true, idleScopeTimeoutMs: 10 });
    const a = installed(registry, 'a', 0);
    const pending = registry.reserve('b', 0)!;
    const { workers, creations } = registry.clear();
    expect(workers).toEqual([a]);
    expect(creations).toEqual([pending]);
    expect([a.state, pending.worker.state]).toEqual(['retired', 'retired']);
    expect(registry.activeScopes).toBe(0);
  });
});
