import { createHash } from 'node:crypto';
import { RuntimeServiceError, type RuntimeServiceErrorCode } from '../../runtime-service.errors';
import type { ComponentCapabilities } from '../../services.types';

/** Texts that must never appear in an error: every filename, scope part and mime type the contract uses carries this. */
export const SECRET = 'Sekr3t';

/** The rejection of `promise`, checked to be a `RuntimeServiceError` with `code` (and `details` when given), holding no {@link SECRET}. */
export async function serviceError(promise: Promise<unknown>, code: RuntimeServiceErrorCode, details?: Record<string, unknown>): Promise<RuntimeServiceError> {
  let error: unknown;
  try {
    await promise;
  } catch (caught) {
    error = caught;
  }
  if (!RuntimeServiceError.isRuntimeServiceError(error)) throw new Error(`expected RuntimeServiceError ${code}, got ${error === undefined ? 'success' : String(error)}`);
  expect({ code: error.code, details: error.details }).toEqual({ code, details: details ?? error.details });
  expectNoContent(error);
  return error;
}

/**
 * Fails when the error's message, details or stack header name a path or carry any of the contract's
 * content. The stack's frames are left out: they name this package's own source files, wherever the
 * checkout lies (under `/tmp` in CI).
 */
export function expectNoContent(error: Error & { details?: unknown }): void {
  const text = `${error.message} ${JSON.stringify(error.details ?? null)} ${(error.stack ?? '').split('\n')[0]}`;
  expect(text).not.toContain(SECRET);
  expect(text).not.toMatch(/\/tmp\/|scope-shards|\.bin|\.json/);
}

/** UTF-8 bytes of `text`. */
export const bytes = (text: string) => new Uint8Array(Buffer.from(text, 'utf8'));
/** The UTF-8 text of `data`. */
export const text = (data: Uint8Array) => Buffer.from(data).toString('utf8');
/** SHA-256 hex of `data`. */
export const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

/** The expected capabilities of an adapter. */
export function expectArtifactCapabilities(capabilities: ComponentCapabilities, persistence: 'volatile' | 'postgres' | 'filesystem'): void {
  const durable = persistence !== 'volatile';
  expect(Object.isFrozen(capabilities)).toBe(true);
  expect(capabilities).toEqual({
    api_version: 1,
    contract_version: 1,
    immutable_versions: true,
    persistence,
    durable,
    search: null,
    idempotent_ingestion: false,
    incremental_events: false,
    erasure_epoch_fencing: false,
    quota_scope: durable ? 'exact_scope_shard' : 'shared_adapter',
    idle_reclamation: durable ? 'lru_on_capacity' : 'not_required_shared_adapter',
  });
}
