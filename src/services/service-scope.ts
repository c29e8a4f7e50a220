import { canonicalJson } from '../json/canonical-json';
import { readOptions } from '../shared/options/option-reader';
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

const ARTIFACT_SCOPE_RULES = { appName: isScopePart, userId: isScopePart, sessionId: isScopePart };
const MEMORY_SCOPE_RULES = { appName: isScopePart, userId: isScopePart };

/** `{appName, userId, sessionId?}` read from `value` with the shared reader (other keys ignored, no getter run); else `invalid_scope`. */
export function checkArtifactScope(value: unknown): ArtifactScope {
  const read = readOptions(value ?? null, ARTIFACT_SCOPE_RULES, { name: 'scope', unknownKeys: 'ignore' });
  if (!read.ok) throw new RuntimeServiceError('invalid_scope');
  const { appName, userId, sessionId } = read.values as Partial<ArtifactScope>;
  if (appName === undefined || userId === undefined) throw new RuntimeServiceError('invalid_scope');
  return Object.freeze(sessionId === undefined ? { appName, userId } : { appName, userId, sessionId });
}

/** `{appName, userId}` read from `value` with the shared reader (other keys ignored, no getter run); else `invalid_memory_scope`. */
export function checkMemoryScope(value: unknown): MemoryScope {
  const read = readOptions(value ?? null, MEMORY_SCOPE_RULES, { name: 'scope', unknownKeys: 'ignore' });
  if (!read.ok) throw new RuntimeServiceError('invalid_memory_scope');
  const { appName, userId } = read.values as Partial<MemoryScope>;
  if (appName === undefined || userId === undefined) throw new RuntimeServiceError('invalid_memory_scope');
  return Object.freeze({ appName, userId });
}

/** The scope key (spec 07 §1.1): SHA-256 hex of the canonical JSON of `{kind, ...scope}`. */
export function scopeKey(kind: 'artifact' | 'memory', scope: ArtifactScope | MemoryScope): string {
  return sha256Hex(canonicalJson({ kind, ...scope }));
}
