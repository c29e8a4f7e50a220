import type { DataSource } from 'typeorm';
import type { Clock } from '../../shared/time/clock';
import type { TelemetrySink } from '../../telemetry/telemetry-sink';
import { HeldLeases } from '../outbox/outbox-leases';
import { compileServiceProfile } from '../profile/service-profile';
import { buildGenerationComponents } from './generation-components';
import { RuntimeServiceSupervisor } from './runtime-service-supervisor';
import { ServiceGeneration } from './service-generation';

/** What a bundle runs on. */
export interface RuntimeServicesDeps {
  /** The shared DataSource of the durable profile (never closed by the bundle). */
  readonly dataSource?: DataSource;
  readonly clock?: Clock;
  readonly events?: TelemetrySink;
  /** Awaited before the first generation validates its tables: the app's one start-up schema check (`RuntimeServicesModule` passes it). @default none */
  readonly schemaCheck?: () => Promise<void>;
}

/**
 * Compiles `{profile, config}` (every configuration error thrown here, before anything starts) and
 * returns the supervisor whose generations are built from it. `start()` runs the first one.
 *
 * @example
 * const supervisor = createRuntimeServices('durable_local', { artifactRoot: '/var/lib/agent-artifacts' }, { dataSource });
 * await supervisor.start();
 * const runner = new Runner({ ...(supervisor.runnerSpec() as GenerationRunnerSpec).runnerOptions, appName, agent });
 */
export function createRuntimeServices(profile: unknown, config: unknown, deps: RuntimeServicesDeps = {}): RuntimeServiceSupervisor {
  const compiled = compileServiceProfile(profile, config);
  // outlives every generation: the next one ends the outbox rows a stopped one left running
  const heldLeases = new HeldLeases();
  return new RuntimeServiceSupervisor(
    compiled,
    (number, onFault) => {
      if (compiled.profile === 'disabled') throw new TypeError('the disabled profile has no generation');
      let generation: ServiceGeneration | null = null;
      const components = buildGenerationComponents(compiled, {
        ...deps,
        heldLeases,
        childDown: (component) => generation?.fail('runtime_service_child_down', { component }),
      });
      generation = new ServiceGeneration(number, compiled, components, { ...deps, onFault });
      return generation;
    },
    deps.clock ? { clock: deps.clock } : {},
  );
}
