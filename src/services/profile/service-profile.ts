import { isAbsolute } from 'node:path';
import type { ErrorDetails } from '../../shared/errors/agent-runtime-error';
import { optionFailureDetails, readOptions, type OptionRules } from '../../shared/options/option-reader';
import { integerIn } from '../../shared/options/option-rules';
import { anyValue, readConfig } from '../config-reader';
import { RuntimeServiceError } from '../runtime-service.errors';
import { resolveArtifactAdapterConfig, type ArtifactAdapterKind } from '../artifacts/artifact-adapter-config';
import { resolveMemoryAdapterConfig } from '../memory/memory-adapter-config';
import { resolveMemoryOutboxOptions } from '../outbox/outbox-options';
import { readComponentSettings, type ComponentSettings } from './component-settings';

/** The profiles of spec 07 §3. */
export type RuntimeServiceProfile = 'disabled' | 'ephemeral_local' | 'durable_local';


/** A profile compiled before anything starts: every key checked, the adapters chosen by the profile alone. */
export type CompiledServiceProfile =
  | { readonly profile: 'disabled' }
  | {
      readonly profile: 'ephemeral_local' | 'durable_local';
      readonly routing: 'shared' | 'exact_scope';
      readonly artifactAdapter: ArtifactAdapterKind;
      readonly memoryAdapter: 'in_memory' | 'postgres';
      readonly artifactRoot: string | null;
      readonly artifact: ComponentSettings;
      readonly memory: ComponentSettings;
      /** The raw `memoryOutbox` options (durable only; validated by the outbox). */
      readonly memoryOutbox: unknown;
      readonly probeIntervalMs: number;
    };

const PROFILES: readonly RuntimeServiceProfile[] = ['disabled', 'ephemeral_local', 'durable_local'];
/** The keys of each profile; every value is checked after the keys, with a reason of its own. */
const ALLOWED_KEYS: Readonly<Record<RuntimeServiceProfile, OptionRules<string>>> = {
  disabled: {},
  ephemeral_local: { artifact: anyValue, memory: anyValue },
  durable_local: { artifactRoot: anyValue, artifact: anyValue, memory: anyValue, memoryOutbox: anyValue, probeIntervalMs: anyValue },
};
/** Postgres paths and file names cannot hold U+0000; a lone surrogate has no file-system spelling. */
const UNUSABLE_PATH = /[\u0000\p{Cs}]/u;

const invalid = (profile: string, reason: string, details: ErrorDetails = {}) =>
  new RuntimeServiceError('invalid_runtime_service_profile_config', { profile, reason, ...details });

/**
 * The `{profile, config}` of the module options, read with the shared reader (other keys ignored, no
 * getter run); options that are not a plain object → `invalid_runtime_service_profile_config`
 * `{field: 'options'}`, a key held by an accessor → the same code naming it.
 */
export function readProfileOptions(options: unknown): { readonly profile: unknown; readonly config: unknown } {
  const read = readOptions(options, { profile: anyValue, config: anyValue }, { name: 'options', unknownKeys: 'ignore' });
  if (!read.ok) throw new RuntimeServiceError('invalid_runtime_service_profile_config', optionFailureDetails(read.fields));
  return { profile: read.values.profile, config: read.values.config };
}

/**
 * Compiles `{profile, config}` (spec 07 §3): `unknown_runtime_service_profile`, or
 * `invalid_runtime_service_profile_config` with `{profile, reason}` (`expected_object`,
 * `unknown_keys` + `field`/sorted `fields`, a key held by an accessor counting as unknown,
 * `artifact_root` + `detail`, `probe_interval_ms`), or a component's
 * `invalid_runtime_service_component_config`. The adapters' own configs are checked by the
 * adapters when the generation builds them, before anything starts.
 */
export function compileServiceProfile(profile: unknown, config: unknown): CompiledServiceProfile {
  if (typeof profile !== 'string' || !(PROFILES as readonly string[]).includes(profile)) throw new RuntimeServiceError('unknown_runtime_service_profile');
  const name = profile as RuntimeServiceProfile;
  const read = readConfig(config, ALLOWED_KEYS[name]);
  if (!read.ok) throw read.failure === 'expected_object' ? invalid(name, 'expected_object') : invalid(name, 'unknown_keys', optionFailureDetails(read.fields));
  if (name === 'disabled') return Object.freeze({ profile: 'disabled' });
  const values = read.values as Record<string, unknown>;
  const durable = name === 'durable_local';
  const artifactRoot = durable ? readArtifactRoot(name, values.artifactRoot) : null;
  const probeIntervalMs = values.probeIntervalMs ?? 1000;
  if (!integerIn(100, 60_000)(probeIntervalMs)) throw invalid(name, 'probe_interval_ms');
  const artifactAdapter: ArtifactAdapterKind = !durable ? 'in_memory' : artifactRoot === null ? 'postgres' : 'filesystem';
  const memoryAdapter = durable ? 'postgres' : 'in_memory';
  const artifact = readComponentSettings('artifact', values.artifact);
  const memory = readComponentSettings('memory', values.memory);
  // the adapters and the outbox read their configs again when built; here a bad one fails before anything starts
  resolveArtifactAdapterConfig(artifactAdapter, artifact.adapterConfig);
  resolveMemoryAdapterConfig(memoryAdapter, memory.adapterConfig);
  const memoryOutbox = durable ? (values.memoryOutbox ?? {}) : undefined;
  if (durable) resolveMemoryOutboxOptions(memoryOutbox);
  return Object.freeze({
    profile: name,
    routing: durable ? 'exact_scope' : 'shared',
    artifactAdapter,
    memoryAdapter,
    artifactRoot,
    artifact,
    memory,
    memoryOutbox,
    probeIntervalMs: probeIntervalMs as number,
  });
}

function readArtifactRoot(profile: string, root: unknown): string | null {
  if (root === undefined) return null;
  if (typeof root !== 'string' || root.length === 0 || UNUSABLE_PATH.test(root)) throw invalid(profile, 'artifact_root', { detail: 'invalid' });
  if (!isAbsolute(root)) throw invalid(profile, 'artifact_root', { detail: 'must_be_absolute' });
  return root;
}
