import type * as PromClient from 'prom-client';

let loaded: typeof PromClient | undefined;

/**
 * prom-client, required on first use: it requires `@opentelemetry/api` at load, and the package's
 * entry point must load neither unless an application builds metrics.
 */
export function promClient(): typeof PromClient {
  loaded ??= require('prom-client') as typeof PromClient;
  return loaded;
}
