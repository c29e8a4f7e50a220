/** JSON-safe data an indicator adds beside `status` (counts, flags, codes; never error text). */
export type ComponentData = Readonly<Record<string, string | number | boolean | null>>;

/** One component's state: `{status, ...data}`, as a terminus indicator reports it. */
export type ComponentHealth = Readonly<{ status: 'up' | 'down' } & Record<string, string | number | boolean | null>>;

/** What an indicator's `isHealthy()` returns: `{[component]: {status, ...data}}` (terminus' `HealthIndicatorResult`). */
export type ComponentHealthResult = Readonly<Record<string, ComponentHealth>>;

/**
 * The readiness answer, in terminus' shape: `ok` when every component is up, `error` otherwise;
 * `info` the components up, `error` the components down, `details` all of them, keys sorted.
 */
export interface ReadinessReport {
  readonly status: 'ok' | 'error';
  readonly info: Readonly<Record<string, ComponentHealth>>;
  readonly error: Readonly<Record<string, ComponentHealth>>;
  readonly details: Readonly<Record<string, ComponentHealth>>;
}

/**
 * An indicator result `{[key]: {...data, status}}`, built without terminus so that the modules
 * can report readiness whether or not `@nestjs/terminus` is installed.
 */
export function indicatorResult(key: string, up: boolean, data: ComponentData = {}): ComponentHealthResult {
  return { [key]: Object.freeze({ ...data, status: up ? 'up' : 'down' }) as ComponentHealth };
}

/**
 * The entries of an indicator's answer that are well-formed component states, copied with their
 * numbers, booleans, nulls and snake_case codes only; an answer with none counts as `{[component]: {status: 'down'}}`.
 */
export function componentStates(component: string, answer: unknown): Array<[string, ComponentHealth]> {
  const states: Array<[string, ComponentHealth]> = [];
  if (typeof answer === 'object' && answer !== null && !Array.isArray(answer)) {
    for (const [key, value] of Object.entries(answer as Record<string, unknown>)) {
      const state = componentState(value);
      if (state) states.push([key, state]);
    }
  }
  return states.length > 0 ? states : [[component, down()]];
}

/** Every state in one report; the first state of a key wins. A down `advisory` component is in `details` only. */
export function readinessReport(states: ReadonlyArray<readonly [string, ComponentHealth]>, advisory: ReadonlySet<string> = new Set()): ReadinessReport {
  const details: Record<string, ComponentHealth> = {};
  for (const [key, state] of states) if (!Object.hasOwn(details, key)) details[key] = state;
  const info: Record<string, ComponentHealth> = {};
  const error: Record<string, ComponentHealth> = {};
  const sorted: Record<string, ComponentHealth> = {};
  for (const key of Object.keys(details).sort()) {
    sorted[key] = details[key];
    if (details[key].status === 'up') info[key] = details[key];
    else if (!advisory.has(key)) error[key] = details[key];
  }
  return Object.freeze({
    status: Object.keys(error).length === 0 ? 'ok' : 'error',
    info: Object.freeze(info),
    error: Object.freeze(error),
    details: Object.freeze(sorted),
  });
}

export function down(data: ComponentData = {}): ComponentHealth {
  return Object.freeze({ ...data, status: 'down' }) as ComponentHealth;
}

function componentState(value: unknown): ComponentHealth | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { status } = value as { status?: unknown };
  if (status !== 'up' && status !== 'down') return undefined;
  const data: Record<string, string | number | boolean | null> = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    // free text is left out (an indicator's `message` is where error text would travel); codes stay
    if (key !== 'status' && (item === null || typeof item === 'number' || typeof item === 'boolean' || isCode(item))) data[key] = item;
  }
  return Object.freeze({ ...data, status });
}

/** A snake_case code such as `standby` or `system_identifier`: a state, never a message. */
function isCode(value: unknown): value is string {
  return typeof value === 'string' && /^[a-z][a-z0-9_]{0,63}$/.test(value);
}
