import { ManualClock } from '../../shared/time/manual-clock';
import { createRuntimeServices } from './runtime-services-factory';
import type { ServiceGeneration } from './service-generation';

const flush = async () => {
  for (let i = 0; i < 20; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

describe('RuntimeServiceSupervisor (spec 07 §5)', () => {
  it('after a fault starts a new generation after 1 s, doubling to 30 s, and never gives up (00-conventions "Health and shutdown")', async () => {
    const clock = new ManualClock();
    const supervisor = createRuntimeServices('ephemeral_local', {}, { clock });
    const seen: number[] = [];
    supervisor.onGeneration((generation) => seen.push(generation.generation));
    await supervisor.start();
    expect(seen).toEqual([1]);
    const fault = () => (supervisor.current() as ServiceGeneration).fail('runtime_service_child_down', { component: 'artifact' });

    const first = supervisor.services();
    fault();
    await flush();
    expect(supervisor.state).toBe('restarting');
    expect(() => supervisor.services()).toThrow(expect.objectContaining({ code: 'runtime_service_bundle_unavailable' }));
    await expect(first.artifactService.listArtifactKeys({ appName: 'a', userId: 'u' })).rejects.toMatchObject({ code: 'runtime_service_generation_stale' });
    clock.advance(999);
    await flush();
    expect(supervisor.state).toBe('restarting');
    clock.advance(1);
    await flush();
    expect([supervisor.state, supervisor.services().generation]).toEqual(['running', 2]);

    // each further fault of an unstable generation doubles the pause, capped at 30 s; ten faults in a row never leave it failed
    for (const delay of [2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000, 30_000, 30_000]) {
      fault();
      await flush();
      clock.advance(delay - 1);
      await flush();
      expect(supervisor.state).toBe('restarting');
      clock.advance(1);
      await flush();
      expect(supervisor.state).toBe('running');
    }
    expect(seen.at(-1)).toBe(11);

    // a generation that ran 30 s was stable: the next pause is 1 s again
    clock.advance(30_000);
    fault();
    await flush();
    clock.advance(1000);
    await flush();
    expect([supervisor.state, supervisor.services().generation]).toEqual(['running', 12]);

    await supervisor.restart();
    expect(supervisor.state).toBe('running');
    expect(seen.at(-1)).toBe(13);
    await supervisor.stop();
    expect(supervisor.state).toBe('stopped');
  });

  it('the disabled profile has in-memory sessions only, and a differing expected profile is refused', async () => {
    const supervisor = createRuntimeServices('disabled', undefined);
    await supervisor.start();
    const spec = supervisor.runnerSpec('disabled');
    expect(spec.profile).toBe('disabled');
    expect(Object.keys(spec.runnerOptions)).toEqual(['sessionService']);
    expect(() => supervisor.runnerSpec('ephemeral_local')).toThrow(expect.objectContaining({ code: 'runtime_service_profile_mismatch' }));
    expect(() => supervisor.services()).toThrow(expect.objectContaining({ code: 'runtime_service_bundle_unavailable' }));
  });

  it('status and telemetry carry no content', async () => {
    const emitted: Array<{ event: string; payload: unknown }> = [];
    const supervisor = createRuntimeServices('ephemeral_local', {}, { events: { emit: (event, payload) => emitted.push({ event, payload }) } });
    await supervisor.start();
    const { artifactService } = supervisor.services();
    await artifactService.saveArtifact({ appName: 'secret-app', userId: 'secret-user', filename: 'secret.txt', artifact: { data: new Uint8Array([1]), mimeType: 'text/plain' } });
    await supervisor.stop();
    expect(emitted.map((entry) => entry.event)).toEqual(['agent_runtime.services.generation', 'agent_runtime.services.generation']);
    expect(emitted[0].payload).toEqual({ event: 'started', generation: 1, profile: 'ephemeral_local', reason: null });
    expect(JSON.stringify([emitted, supervisor.status()])).not.toMatch(/secret/);
  });
});
