import { isValidId, MAX_ID_BYTES } from '../shared/ids/id-rule';
import { sha256Hex } from '../shared/text/sha256';

/** Longest agent, tool or content subject name, in UTF-8 bytes. */
export const MAX_SUBJECT_BYTES = MAX_ID_BYTES;
/** Longest policy id, in UTF-8 bytes. */
export const MAX_POLICY_ID_BYTES = 128;

/**
 * The subject recorded for a tool name the caller did not declare (a name a model made up): the
 * name itself is model content and never becomes a subject, only its {@link undeclaredNameDigest}.
 */
export const UNKNOWN_TOOL_SUBJECT = 'unknown_tool';
/** Hex digits of the SHA-256 prefix that stands for an undeclared tool name. */
export const UNDECLARED_NAME_DIGEST_LENGTH = 16;

/** The subject rule of spec 02 §4 (the package's id rule): 1..256 UTF-8 bytes, well-formed, no control characters. */
export function isValidSubject(value: unknown): value is string {
  return isValidId(value, MAX_SUBJECT_BYTES);
}

/**
 * The first 16 lowercase hex digits of the SHA-256 of `name`'s UTF-8 bytes: equal names give equal
 * digests, so repeats of one made-up name can be matched without the name being stored.
 */
export function undeclaredNameDigest(name: string): string {
  return sha256Hex(name).slice(0, UNDECLARED_NAME_DIGEST_LENGTH);
}
