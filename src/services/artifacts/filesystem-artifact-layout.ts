import { join } from 'node:path';
import { canonicalJson } from '../../json/canonical-json';
import type { JsonObject } from '../../json/json.types';
import { isPlainObject, isSafeIntegerAtLeast } from '../../shared/options/plain-object';
import { randomId } from '../../shared/ids/random-id';
import { sha256Hex } from '../../shared/text/sha256';
import type { ArtifactVersionInfo } from '../services.types';
import { isArtifactFilename, isStorableText, MAX_MIME_TYPE_BYTES } from './artifact-request';
import { versionInfo } from './artifact-records';
import { corruptRecord } from './artifact-store-failure';

/** The directory under `artifactRoot` holding one directory per scope key. */
export const SCOPE_SHARDS = 'scope-shards';
/** The directory of a scope holding its temporary files (never a 64-hex file directory name). */
export const TEMP_DIRECTORY = 'tmp';
/** The file of a file directory that keeps `next_version`. */
export const HEAD_FILE = 'head.json';

const SCOPE_KEY = /^[0-9a-f]{64}$/;
const VERSION_FILE = /^([1-9][0-9]{0,15})\.(bin|json)$/;

/** True for a scope key (and so for a file directory name): 64 lowercase hex digits. */
export function isShardName(name: string): boolean {
  return SCOPE_KEY.test(name);
}

/** Where one scope's files live under the root: `<root>/scope-shards/<scope key>`. */
export interface ScopeShard {
  readonly directory: string;
  readonly temporaries: string;
}

/** The shard directories of `scopeKey` under `root`. */
export function scopeShard(root: string, scopeKey: string): ScopeShard {
  const directory = join(root, SCOPE_SHARDS, scopeKey);
  return { directory, temporaries: join(directory, TEMP_DIRECTORY) };
}

/** The directory of `filename` in a scope: named by the SHA-256 hex of the filename, so no user text reaches a path. */
export function fileDirectory(shard: ScopeShard, filename: string): string {
  return join(shard.directory, sha256Hex(filename));
}

/** A fresh temporary name in the scope's temporaries directory. */
export function temporaryPath(shard: ScopeShard, suffix: string): string {
  return join(shard.temporaries, `${randomId('')}${suffix}.tmp`);
}

/** `<version>.bin` or `<version>.json`. */
export function versionFileName(version: number, kind: 'bin' | 'json'): string {
  return `${version}.${kind}`;
}

/** The version and kind of a version file name, else `null`. */
export function parseVersionFileName(name: string): { readonly version: number; readonly kind: 'bin' | 'json' } | null {
  const match = VERSION_FILE.exec(name);
  if (match === null) return null;
  const version = Number(match[1]);
  return Number.isSafeInteger(version) ? { version, kind: match[2] as 'bin' | 'json' } : null;
}

/** The `.json` of a version: its metadata and filename (canonical JSON). */
export function versionDocument(filename: string, info: ArtifactVersionInfo): string {
  return canonicalJson({ schema_version: 1, filename, ...info });
}

/** The metadata and filename of a version's `.json`; anything else is `corrupt_record`. */
export function parseVersionDocument(text: string, version: number): { readonly filename: string; readonly info: ArtifactVersionInfo } {
  const document = parseObject(text);
  const { filename, mime_type, size_bytes, sha256, custom_metadata, created_at_ms } = document;
  const ok =
    document.schema_version === 1 &&
    document.version === version &&
    isArtifactFilename(filename) &&
    isStorableText(mime_type, MAX_MIME_TYPE_BYTES) &&
    isSafeIntegerAtLeast(size_bytes, 0) &&
    typeof sha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(sha256) &&
    isPlainObject(custom_metadata) &&
    isSafeIntegerAtLeast(created_at_ms, 0);
  if (!ok) throw corruptRecord();
  return { filename, info: versionInfo({ version, mime_type, size_bytes, sha256, custom_metadata: custom_metadata as JsonObject, created_at_ms }) };
}

/** `head.json`: the filename and the next version to try. */
export function headDocument(filename: string, nextVersion: number): string {
  return canonicalJson({ schema_version: 1, filename, next_version: nextVersion });
}

/** `next_version` of a `head.json`; anything else is `corrupt_record`. */
export function parseHeadDocument(text: string): number {
  const document = parseObject(text);
  if (document.schema_version !== 1 || !isSafeIntegerAtLeast(document.next_version, 1)) throw corruptRecord();
  return document.next_version;
}

function parseObject(text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw corruptRecord();
  }
  if (!isPlainObject(parsed)) throw corruptRecord();
  return parsed;
}
