/** The `@opentelemetry/api` module as the tracing hooks use it. */
export type OtelApi = typeof import('@opentelemetry/api');

/** Returns the OpenTelemetry API, or `null` when it cannot be loaded. */
export type OtelApiLoader = () => OtelApi | null;

/**
 * A loader that requires the API on first use and remembers the answer, a failure included: the
 * optional peer is never loaded at module load, and a missing one is looked for once.
 */
export function createOtelApiLoader(load: () => unknown): OtelApiLoader {
  let loaded: OtelApi | null | undefined;
  return () => {
    if (loaded !== undefined) return loaded;
    try {
      const api = load() as Partial<OtelApi> | null | undefined;
      loaded = typeof api?.trace?.getTracer === 'function' && typeof api.context?.active === 'function' ? (api as OtelApi) : null;
    } catch {
      loaded = null;
    }
    return loaded;
  };
}

/** The package's loader of the optional peer `@opentelemetry/api`. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const loadOtelApi: OtelApiLoader = createOtelApiLoader(() => require('@opentelemetry/api'));
