import { optionFailureDetails, readOptions } from '../../shared/options/option-reader';
import { isFunction } from '../../shared/options/option-rules';
import { isPlainObject } from '../../shared/options/plain-object';
import { REGISTRY_SETTING_RULES, type RunRegistryOptions } from './run-registry-options';
import type { RegistryRunner } from './run-registry.types';
import { RunnerError } from '../runner.errors';

/** Injection token of the resolved `RunsModule` options. */
export const RUNS_MODULE_OPTIONS = Symbol('RUNS_MODULE_OPTIONS');

/** Supplies the user id of a `POST /runs` from the request (e.g. from your authentication); it wins over the body's `user_id`. */
export type ResolveUserId = (request: unknown) => string | Promise<string>;

/** Options of `RunsModule.forRoot` (spec 03 §10). Unknown keys and bad values stop bootstrap with `invalid_runner_options`. */
export interface RunsModuleOptions {
  /** The runners, addressed by their root agent's name (unique). */
  readonly runners: readonly RegistryRunner[];
  /** Every other `RunRegistry` option (`maxRuns`, `finishedRunTtlMs`, ...). @default the registry's defaults */
  readonly registry?: Omit<RunRegistryOptions, 'runners'>;
  /** @default the body's `user_id`, which is then required */
  readonly resolveUserId?: ResolveUserId;
}

/** The module's options after validation. */
export interface ResolvedRunsModuleOptions {
  readonly registry: RunRegistryOptions;
  readonly resolveUserId: ResolveUserId | undefined;
}

const RULES = { runners: Array.isArray, registry: isPlainObject, resolveUserId: isFunction };

/** Validates the module options (the registry validates its own again when built). */
export function resolveRunsModuleOptions(options: unknown): ResolvedRunsModuleOptions {
  const read = readOptions(options, RULES, { name: 'options', unknownKeys: 'refuse' });
  if (!read.ok) throw new RunnerError('invalid_runner_options', optionFailureDetails(read.fields));
  const { runners, registry, resolveUserId } = read.values;
  if (runners === undefined) throw new RunnerError('invalid_runner_options', { field: 'runners' });
  const settings = readOptions(registry, REGISTRY_SETTING_RULES, { name: 'registry', unknownKeys: 'refuse' });
  if (!settings.ok) throw new RunnerError('invalid_runner_options', optionFailureDetails(settings.fields.map((field) => (field === 'registry' ? field : `registry.${field}`))));
  return Object.freeze({
    registry: Object.freeze({ ...(settings.values as Omit<RunRegistryOptions, 'runners'>), runners: runners as readonly RegistryRunner[] }),
    resolveUserId: resolveUserId as ResolveUserId | undefined,
  });
}
