import { optionFailureDetails, type OptionRules } from '../../shared/options/option-reader';
import { integerIn } from '../../shared/options/option-rules';
import { anyValue, type ComponentKind, invalidComponentConfig, readConfig } from '../config-reader';

/** Router settings of one component (spec 07 §3), with the adapter's own config still raw. */
export interface ComponentSettings {
  readonly adapterConfig: unknown;
  readonly maxActiveScopes: number;
  readonly maxRouterQueue: number;
  readonly idleScopeTimeoutMs: number;
  readonly callTimeoutMs: number;
}

const RULES: OptionRules<keyof ComponentSettings> = {
  adapterConfig: anyValue,
  maxActiveScopes: integerIn(1),
  maxRouterQueue: integerIn(1),
  idleScopeTimeoutMs: integerIn(1, 86_400_000),
  callTimeoutMs: integerIn(1, 600_000),
};
const DEFAULT_CALL_TIMEOUT_MS: Readonly<Record<ComponentKind, number>> = { artifact: 30_000, memory: 5_000 };

/**
 * The settings of the `artifact` or `memory` key of a profile config (spec 07 §3). Refusals are
 * `invalid_runtime_service_component_config` with `{kind, reason}`: `expected_object`,
 * `unknown_keys` (+ `field`/sorted `fields`; `adapter` is unknown too, so configuration cannot choose
 * an implementation), or `component_config` (+ `field`/sorted `fields`: the options whose value
 * breaks its rule or is held by an accessor). Unknown keys are reported first.
 */
export function readComponentSettings(kind: ComponentKind, value: unknown): ComponentSettings {
  const read = readConfig(value, RULES);
  if (!read.ok) {
    if (read.failure === 'expected_object') throw invalidComponentConfig(kind, 'expected_object');
    throw invalidComponentConfig(kind, read.failure === 'unknown_keys' ? 'unknown_keys' : 'component_config', optionFailureDetails(read.fields));
  }
  const values = read.values as Partial<ComponentSettings>;
  return Object.freeze({
    adapterConfig: values.adapterConfig ?? {},
    maxActiveScopes: values.maxActiveScopes ?? 1024,
    maxRouterQueue: values.maxRouterQueue ?? 256,
    idleScopeTimeoutMs: values.idleScopeTimeoutMs ?? 60_000,
    callTimeoutMs: values.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS[kind],
  });
}
