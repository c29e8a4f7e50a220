import type { PostgresFailure } from '../../database/postgres-failure';
import { postgresStoreFailure } from '../postgres-store-failure';
import { RuntimeServiceError } from '../runtime-service.errors';
import type { AdapterCallOptions } from '../services.types';

/** A database failure of the Postgres artifact adapter (see {@link postgresStoreFailure}): the SQLSTATE only. */
export function artifactStoreFailure(failure: PostgresFailure): RuntimeServiceError {
  return postgresStoreFailure('artifact', failure);
}

const ERRNO_CODE = /^E[A-Z0-9]{1,15}$/;

/**
 * A filesystem failure of the filesystem adapter: `runtime_service_store_unavailable` with the
 * errno code only (`EACCES`, `ENOSPC`, …; `null` for anything else), never a path or message.
 */
export function filesystemStoreFailure(error: unknown): RuntimeServiceError {
  const code = (error as { code?: unknown } | null)?.code;
  return new RuntimeServiceError('runtime_service_store_unavailable', { fs_error: typeof code === 'string' && ERRNO_CODE.test(code) ? code : null });
}

/** A stored record that does not read back as written: `runtime_service_store_unavailable` `{reason: 'corrupt_record'}`. */
export function corruptRecord(): RuntimeServiceError {
  return new RuntimeServiceError('runtime_service_store_unavailable', { reason: 'corrupt_record' });
}

/** An operation on an adapter after `close()`: it belongs to a stopped generation. */
export function closedAdapter(): RuntimeServiceError {
  return new RuntimeServiceError('runtime_service_generation_stale');
}

/** Throws the signal's reason when the call was already given up. */
export function throwIfAborted(call: AdapterCallOptions | undefined): void {
  call?.signal?.throwIfAborted();
}
