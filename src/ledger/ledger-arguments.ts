import { types } from 'node:util';
import { canonicalJson, measure } from '../json';
import { isValidId } from '../shared/id-rule';
import { isPlainObject, isSafeIntegerAtLeast } from '../shared/plain-object';
import { MAX_LEASE_MS } from './ledger-options';
import { LedgerError, type LedgerOperation } from './ledger.errors';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** `\u0000` as `JSON.stringify` escapes it, preceded by an even number of backslashes (so not `\\u0000`). */
const ESCAPED_NUL = /(?:^|[^\\])(?:\\\\)*\\u0000/;

/** `invalid_<operation>_arguments` naming the argument. */
export function invalidArgument(operation: LedgerOperation, argument: string): LedgerError {
  return new LedgerError(`invalid_${operation}_arguments`, { argument });
}


export function invocationId(operation: LedgerOperation, id: unknown): string {
  if (!isValidId(id)) throw invalidArgument(operation, 'id');
  return id;
}

/** A UUID string, lower-cased as Postgres prints it. */
export function ownerToken(operation: LedgerOperation, token: unknown, argument = 'token'): string {
  if (typeof token !== 'string' || !UUID.test(token)) throw invalidArgument(operation, argument);
  return token.toLowerCase();
}

export function leaseMs(operation: LedgerOperation, value: unknown): number {
  if (!isSafeIntegerAtLeast(value, 1) || value > MAX_LEASE_MS) throw invalidArgument(operation, 'leaseMs');
  return value;
}

/**
 * The own data properties of a call's options object, refusing anything else (`undefined` is an
 * empty object). Unknown keys are refused so that a misspelt `now` never silently becomes the
 * database clock.
 */
export function callOptions(operation: LedgerOperation, options: unknown, allowed: readonly string[], argument = 'options'): Record<string, unknown> {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null || types.isProxy(options) || !isPlainObject(options)) {
    throw invalidArgument(operation, argument);
  }
  const values: Record<string, unknown> = Object.create(null);
  for (const key of Reflect.ownKeys(options)) {
    const descriptor = Object.getOwnPropertyDescriptor(options, key);
    if (typeof key !== 'string' || !allowed.includes(key) || !descriptor || !('value' in descriptor)) throw invalidArgument(operation, argument);
    values[key] = descriptor.value;
  }
  return values;
}

/** An explicit `now` (non-negative safe integer), or `null` for the database clock. */
export function explicitNow(operation: LedgerOperation, value: unknown, plusMs = 0): number | null {
  if (value === undefined) return null;
  // the stored lease `now + leaseMs` must stay a safe integer to read back exactly
  if (!isSafeIntegerAtLeast(value, 0) || !Number.isSafeInteger(value + plusMs)) throw invalidArgument(operation, 'now');
  return value;
}

/**
 * Canonical JSON text of a checkpoint or outcome: JSON-safe by the canonical JSON rules, no U+0000
 * in any string or key (jsonb rejects it), at most `maxBytes` UTF-8 bytes. The size is measured
 * first, so an oversized document costs work in proportion to the limit only.
 */
export function jsonDocument(operation: LedgerOperation, argument: string, value: unknown, maxBytes: number): string {
  let json: string;
  try {
    if (measure(value, maxBytes).exceeded) throw invalidArgument(operation, argument);
    json = canonicalJson(value);
  } catch (error) {
    if (LedgerError.isLedgerError(error)) throw error;
    throw invalidArgument(operation, argument);
  }
  if (json.includes('\\u0000') && ESCAPED_NUL.test(json)) throw invalidArgument(operation, argument);
  return json;
}
