import { types } from 'node:util';
import { canonicalJson } from '../../json/canonical-json';
import { hasEscapedNul } from '../../json/escaped-nul';
import { frozenJsonParse } from '../../json/json-copy';
import type { JsonObject } from '../../json/json.types';
import { measure } from '../../json/measure';
import { optionFailureDetails, readOptions, type OptionRules } from '../../shared/options/option-reader';
import { isSafeIntegerAtLeast } from '../../shared/options/plain-object';
import { sha256Hex } from '../../shared/text/sha256';
import { RuntimeServiceError } from '../runtime-service.errors';
import { checkArtifactScope } from '../service-scope';
import type { ArtifactScope } from '../services.types';
import { anyValue } from '../config-reader';

/** Largest filename, UTF-8 bytes. */
export const MAX_FILENAME_BYTES = 1024;
/** Largest mime type, UTF-8 bytes. */
export const MAX_MIME_TYPE_BYTES = 255;
/** Largest `customMetadata`, canonical JSON bytes. */
export const MAX_CUSTOM_METADATA_BYTES = 16 * 1024;

/** A scope and one of its files, checked. */
export interface CheckedFile {
  readonly scope: ArtifactScope;
  readonly filename: string;
}

/** A save, checked: the data is a copy the caller can no longer change. */
export interface CheckedSave extends CheckedFile {
  readonly data: Uint8Array;
  readonly mimeType: string;
  /** Frozen. */
  readonly customMetadata: JsonObject;
  /** Canonical JSON of `customMetadata`. */
  readonly metadataText: string;
  /** SHA-256 hex of `data`. */
  readonly sha256: string;
}

/** Postgres text cannot hold U+0000 or a lone surrogate, and every adapter accepts the same names. */
const UNSTORABLE = /[\u0000\p{Cs}]/u;

const typedArrayByteLength = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype) as object, 'byteLength')?.get as (this: Uint8Array) => number;

/** A string of 1..`maxBytes` UTF-8 bytes without U+0000 or a lone surrogate. */
export function isStorableText(value: unknown, maxBytes: number): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= maxBytes && !UNSTORABLE.test(value) && Buffer.byteLength(value, 'utf8') <= maxBytes;
}

/** A filename: 1..1024 UTF-8 bytes, no U+0000, no lone surrogate. */
export function isArtifactFilename(value: unknown): value is string {
  return isStorableText(value, MAX_FILENAME_BYTES);
}

const SCOPE_RULES = { appName: anyValue, userId: anyValue, sessionId: anyValue };
const isVersion = (value: unknown) => isSafeIntegerAtLeast(value, 1);

/**
 * `{...scope, filename, artifact: {data, mimeType}, customMetadata?}` checked: `invalid_scope` for
 * the scope, `invalid_artifact` (`{field}` / `{fields}`) for anything else that breaks spec 07 §1.2
 * or is not a key of the request, `artifact_too_large` (`{limit: 'maxArtifactBytes'}`) for more
 * than `maxArtifactBytes` of data. No getter is called; the data is copied.
 */
export function checkSaveRequest(value: unknown, maxArtifactBytes: number): CheckedSave {
  const scope = checkArtifactScope(value);
  const values = readRequest(value, {
    ...SCOPE_RULES,
    filename: isArtifactFilename,
    artifact: anyValue,
    customMetadata: anyValue,
  }, ['filename', 'artifact']);
  const artifact = readOptions(values.artifact, { data: (data) => types.isUint8Array(data), mimeType: (type) => isStorableText(type, MAX_MIME_TYPE_BYTES) }, { name: 'artifact', unknownKeys: 'refuse' });
  if (!artifact.ok) throw invalidArtifact(artifact.fields);
  const { data, mimeType } = artifact.values as { data?: Uint8Array; mimeType?: string };
  if (data === undefined || mimeType === undefined) throw invalidArtifact([data === undefined ? 'data' : 'mimeType']);
  const metadata = metadataDocument(values.customMetadata);
  if (typedArrayByteLength.call(data) > maxArtifactBytes) throw new RuntimeServiceError('artifact_too_large', { limit: 'maxArtifactBytes' });
  const copy = ownCopy(data);
  return Object.freeze({
    scope,
    filename: values.filename as string,
    data: copy,
    mimeType,
    customMetadata: metadata.value,
    metadataText: metadata.text,
    sha256: sha256Hex(copy),
  });
}

/** `{...scope, filename}` checked (`invalid_scope`, `invalid_artifact`). */
export function checkFileRequest(value: unknown): CheckedFile {
  const scope = checkArtifactScope(value);
  const values = readRequest(value, { ...SCOPE_RULES, filename: isArtifactFilename }, ['filename']);
  return Object.freeze({ scope, filename: values.filename as string });
}

/** `{...scope, filename, version?}` checked; `version` a safe integer ≥ 1, `null` for the latest. */
export function checkLoadRequest(value: unknown): CheckedFile & { readonly version: number | null } {
  const scope = checkArtifactScope(value);
  const values = readRequest(value, { ...SCOPE_RULES, filename: isArtifactFilename, version: isVersion }, ['filename']);
  return Object.freeze({ scope, filename: values.filename as string, version: (values.version as number | undefined) ?? null });
}

/** `{...scope, filename, version?}` checked; `version` a safe integer ≥ 1 or `'latest'`, `null` for every version. */
export function checkDeleteRequest(value: unknown): CheckedFile & { readonly version: number | 'latest' | null } {
  const scope = checkArtifactScope(value);
  const values = readRequest(value, { ...SCOPE_RULES, filename: isArtifactFilename, version: (v) => v === 'latest' || isVersion(v) }, ['filename']);
  return Object.freeze({ scope, filename: values.filename as string, version: (values.version as number | 'latest' | undefined) ?? null });
}

/** `invalid_artifact` naming what failed (`{field}` or sorted `{fields}`). */
export function invalidArtifact(fields: readonly string[]): RuntimeServiceError {
  return new RuntimeServiceError('invalid_artifact', optionFailureDetails(fields));
}

/** A copy of `data` on an ArrayBuffer of its own: nothing the caller holds can change it, nothing else shares its memory. */
export function ownCopy(data: Uint8Array): Uint8Array {
  try {
    return new Uint8Array(data);
  } catch {
    // a detached buffer
    throw invalidArtifact(['data']);
  }
}

/**
 * `bytes` as a Uint8Array owning exactly its memory: a Buffer cut from Node's shared pool would let
 * `.buffer` read other allocations, so such a view is copied.
 */
export function ownedBytes(bytes: Uint8Array): Uint8Array {
  const whole = bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.byteLength && !(bytes.buffer instanceof SharedArrayBuffer);
  return whole ? new Uint8Array(bytes.buffer, 0, bytes.byteLength) : new Uint8Array(bytes);
}

function readRequest<K extends string>(value: unknown, rules: OptionRules<K>, required: readonly NoInfer<K>[]): { readonly [P in K]?: unknown } {
  const read = readOptions(value, rules, { name: 'request', unknownKeys: 'refuse' });
  if (!read.ok) throw invalidArtifact(read.fields);
  const missing = required.filter((key) => read.values[key] === undefined);
  if (missing.length > 0) throw invalidArtifact(missing);
  return read.values;
}

/** `customMetadata` as canonical text and a frozen copy: `{}` when absent; a JSON object ≤ 16 KiB without U+0000. */
function metadataDocument(value: unknown): { readonly text: string; readonly value: JsonObject } {
  if (value === undefined) return { text: '{}', value: Object.freeze({}) };
  let text: string | undefined;
  try {
    // measured first, so an oversized value costs no more than the limit
    if (!measure(value, MAX_CUSTOM_METADATA_BYTES).exceeded) text = canonicalJson(value);
  } catch {
    text = undefined;
  }
  if (text === undefined || !text.startsWith('{') || hasEscapedNul(text)) throw invalidArtifact(['customMetadata']);
  return { text, value: frozenJsonParse(text) as JsonObject };
}
