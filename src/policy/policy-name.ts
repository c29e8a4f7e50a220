import { isValidId, MAX_ID_BYTES } from '../shared/ids/id-rule';

/** Longest agent, tool or content subject name, in UTF-8 bytes. */
export const MAX_SUBJECT_BYTES = MAX_ID_BYTES;
/** Longest policy id, in UTF-8 bytes. */
export const MAX_POLICY_ID_BYTES = 128;

/** The subject rule of spec 02 §4 (the package's id rule): 1..256 UTF-8 bytes, well-formed, no control characters. */
export function isValidSubject(value: unknown): value is string {
  return isValidId(value, MAX_SUBJECT_BYTES);
}
