import { readOwnData } from '../../shared/options/option-reader';
import { integerIn } from '../../shared/options/option-rules';
import { RuntimeServiceError } from '../runtime-service.errors';

/** A component of the bundle that has a router. */
export type ComponentKind = 'artifact' | 'memory';

/** Router settings of one component (spec 07 §3), with the adapter's own config still raw. */
export interface ComponentSettings {
  readonly adapterConfig: unknown;
  readonly maxActiveScopes: number;
  readonly maxRouterQueue: number;
  readonly idleScopeTimeoutMs: number;
  readonly callTimeoutMs: number;
}

const COMPONENT_KEYS = ['adapterConfig', 'maxActiveScopes', 'maxRouterQueue', 'idleScopeTimeoutMs', 'callTimeoutMs'] as const;
const RULES: Readonly<Record<Exclude<(typeof COMPONENT_KEYS)[number], 'adapterConfig'>, (value: unknown) => boolean>> = {
  maxActiveScopes: integerIn(1),
  maxRouterQueue: integerIn(1),
  idleScopeTimeoutMs: integerIn(1, 86_400_000),
  callTimeoutMs: integerIn(1, 600_000),
};
const DEFAULT_CALL_TIMEOUT_MS: Readonly<Record<ComponentKind, number>> = { artifact: 30_000, memory: 5_000 };

const invalid = (kind: ComponentKind, reason: string, extra: Record<string, readonly string[]> = {}) =>
  new RuntimeServiceError('invalid_runtime_service_component_config', { kind, reason, ...extra });

/**
 * The settings of the `artifact` or `memory` key of a profile config (spec 07 §3). Refusals are
 * `invalid_runtime_service_component_config` with `{kind, reason}`: `expected_object`,
 * `unknown_keys` (+ sorted `keys`; `adapter` is unknown too, so configuration cannot choose an
 * implementation), or the offending option's name.
 */
export function readComponentSettings(kind: ComponentKind, value: unknown): ComponentSettings {
  if (value === undefined) value = {};
  const own = readOwnData(value, COMPONENT_KEYS);
  if (own === null) throw invalid(kind, 'expected_object');
  if (own.unknown.length > 0) throw invalid(kind, 'unknown_keys', { keys: own.unknown });
  const accessor = [...own.accessors].sort()[0];
  if (accessor !== undefined) throw invalid(kind, accessor);
  for (const [option, rule] of Object.entries(RULES)) {
    const given = own.values[option as keyof typeof RULES];
    if (given !== undefined && !rule(given)) throw invalid(kind, option);
  }
  const values = own.values as Partial<Record<(typeof COMPONENT_KEYS)[number], unknown>>;
  return Object.freeze({
    adapterConfig: values.adapterConfig ?? {},
    maxActiveScopes: (values.maxActiveScopes as number | undefined) ?? 1024,
    maxRouterQueue: (values.maxRouterQueue as number | undefined) ?? 256,
    idleScopeTimeoutMs: (values.idleScopeTimeoutMs as number | undefined) ?? 60_000,
    callTimeoutMs: (values.callTimeoutMs as number | undefined) ?? DEFAULT_CALL_TIMEOUT_MS[kind],
  });
}
