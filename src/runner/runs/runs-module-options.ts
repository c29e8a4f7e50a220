import { PRINCIPAL_OPTION_RULES, PrincipalGate, type PrincipalOptions } from '../../http/principal';
import { optionFailureDetails, readOptions } from '../../shared/options/option-reader';
import { isFunction } from '../../shared/options/option-rules';
import { isPlainObject } from '../../shared/options/plain-object';
import type { AuthorizeRun } from './run-access';
import { REGISTRY_SETTING_RULES, type RunRegistryOptions } from './run-registry-options';
import type { RegistryRunner } from './run-registry.types';
import { RunnerError } from '../runner.errors';

/** Injection token of the resolved `RunsModule` options. */
export const RUNS_MODULE_OPTIONS = Symbol('RUNS_MODULE_OPTIONS');

/**
 * Options of `RunsModule.forRoot` (spec 03 §10). Unknown keys and bad values stop bootstrap with
 * `invalid_runner_options`. The principal of a request (`resolvePrincipal`, or `allowAnonymous`) owns
 * the runs it starts and is their user; without either, every `/runs` route answers 404.
 */
export interface RunsModuleOptions extends PrincipalOptions {
  /** The runners, addressed by their root agent's name (unique). */
  readonly runners: readonly RegistryRunner[];
  /** Every other `RunRegistry` option (`maxRuns`, `finishedRunTtlMs`, ...). @default the registry's defaults */
  readonly registry?: Omit<RunRegistryOptions, 'runners'>;
  /**
   * Who else may act on a run: called for a principal that does not own the run; `true` allows
   * the action (e.g. `confirm` for an approver role). A throw counts as `false`. @default only owners
   */
  readonly authorizeRun?: AuthorizeRun;
}

/** The module's options after validation. */
export interface ResolvedRunsModuleOptions {
  readonly registry: RunRegistryOptions;
  readonly principals: PrincipalGate;
  readonly authorizeRun: AuthorizeRun | undefined;
}

const RULES = { runners: Array.isArray, registry: isPlainObject, authorizeRun: isFunction, ...PRINCIPAL_OPTION_RULES };

/** Validates the module options (the registry validates its own again when built). */
export function resolveRunsModuleOptions(options: unknown): ResolvedRunsModuleOptions {
  const read = readOptions(options, RULES, { name: 'options', unknownKeys: 'refuse' });
  if (!read.ok) throw new RunnerError('invalid_runner_options', optionFailureDetails(read.fields));
  const { runners, registry, authorizeRun } = read.values;
  if (runners === undefined) throw new RunnerError('invalid_runner_options', { field: 'runners' });
  const settings = readOptions(registry, REGISTRY_SETTING_RULES, { name: 'registry', unknownKeys: 'refuse' });
  if (!settings.ok) throw new RunnerError('invalid_runner_options', optionFailureDetails(settings.fields.map((field) => (field === 'registry' ? field : `registry.${field}`))));
  return Object.freeze({
    registry: Object.freeze({ ...(settings.values as Omit<RunRegistryOptions, 'runners'>), runners: runners as readonly RegistryRunner[] }),
    principals: new PrincipalGate(read.values),
    authorizeRun: authorizeRun as AuthorizeRun | undefined,
  });
}
