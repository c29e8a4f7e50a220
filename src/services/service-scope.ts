import { canonicalJson } from '../json/canonical-json';
import { readOwnData } from '../shared/options/option-reader';
import { sha256Hex } from '../shared/text/sha256';
import { RuntimeServiceError } from './runtime-service.errors';
import type { ArtifactScope, MemoryScope } from './services.types';

/** Largest scope part, in UTF-8 bytes. */
export const MAX_SCOPE_PART_BYTES = 256;

/** Postgres text cannot hold U+0000 or a lone surrogate. */
const UNSTORABLE = /[\u0000\p{Cs}]/u;

/** A scope part: 1..256 UTF-8 bytes, no U+0000, no lone surrogate. */
export function isScopePart(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && !UNSTORABLE.test(value) && Buffer.byteLength(value, 'utf8') <= MAX_SCOPE_PART_BYTES;
}

/** `{appName, userId, sessionId?}` read from `value` (other keys ignored, no getter run); else `invalid_scope`. */
export function checkArtifactScope(value: unknown): ArtifactScope {
  const own = readOwnData(value, ['appName', 'userId', 'sessionId']);
  const { appName, userId, sessionId } = own?.values ?? {};
  if (own === null || own.accessors.length > 0 || !isScopePart(appName) || !isScopePart(userId) || (sessionId !== undefined && !isScopePart(sessionId))) {
    throw new RuntimeServiceError('invalid_scope');
  }
  return Object.freeze(sessionId === undefined ? { appName, userId } : { appName, userId, sessionId });
}

/** `{appName, userId}` read from `value` (other keys ignored, no getter run); else `invalid_memory_scope`. */
export function checkMemoryScope(value: unknown): MemoryScope {
  const own = readOwnData(value, ['appName', 'userId']);
  const { appName, userId } = own?.values ?? {};
  if (own === null || own.accessors.length > 0 || !isScopePart(appName) || !isScopePart(userId)) throw new RuntimeServiceError('invalid_memory_scope');
  return Object.freeze({ appName, userId });
}

/** The scope key (spec 07 §1.1): SHA-256 hex of the canonical JSON of `{kind, ...scope}`. */
export function scopeKey(kind: 'artifact' | 'memory', scope: ArtifactScope | MemoryScope): string {
  return sha256Hex(canonicalJson({ kind, ...scope }));
}
