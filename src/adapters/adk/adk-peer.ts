import type * as Adk from '@google/adk' with { 'resolution-mode': 'import' };
import { AdkAdapterError } from './adk-adapter.errors';

/** The `@google/adk` module as this adapter uses it. */
export type AdkModule = typeof Adk;

/** The peer range the adapter is written and tested against (`~2.0.0`). */
const SUPPORTED_VERSION = /^2\.0\.\d+(?:$|[-+])/;
const SHOWN_VERSION = /^[0-9A-Za-z.+-]{1,64}$/;

let loaded: AdkModule | undefined;

/**
 * The optional peer, required on first use and cached: the adapter's module graph never imports it
 * at load time, so `nest-agent-runtime/adk` loads without `@google/adk` installed and fails only
 * when something that needs ADK is used, with `adk_peer_missing` or `adk_peer_unsupported`.
 */
export function loadAdk(): AdkModule {
  if (loaded !== undefined) return loaded;
  let version: unknown;
  try {
    version = (require('@google/adk/package.json') as { version?: unknown }).version;
  } catch {
    throw new AdkAdapterError('adk_peer_missing');
  }
  if (typeof version !== 'string' || !SUPPORTED_VERSION.test(version)) {
    throw new AdkAdapterError('adk_peer_unsupported', { version: typeof version === 'string' && SHOWN_VERSION.test(version) ? version : 'unknown' });
  }
  try {
    loaded = require('@google/adk') as AdkModule;
  } catch {
    throw new AdkAdapterError('adk_peer_missing');
  }
  return loaded;
}
