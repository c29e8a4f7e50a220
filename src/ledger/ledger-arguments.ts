import { canonicalJson, measure } from '../json';
import { hasEscapedNul } from '../json/escaped-nul';
import { isValidId } from '../shared/ids/id-rule';
import { readOptions } from '../shared/options/option-reader';
import { isSafeIntegerAtLeast } from '../shared/options/plain-object';
import { MAX_LEASE_MS } from './ledger-options';
import { DEFAULT_EXPIRED_LIMIT, MAX_EXPIRED_LIMIT } from './ledger.constants';
import { LedgerError, type LedgerOperation } from './ledger.errors';
import type { SanitizeTerminalOutcome } from './outcome-projection';

const METADATA_KEYS = ['workflowId', 'workflowVersion', 'kind'] as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `invalid_<operation>_arguments` naming the argument. */
export function invalidArgument(operation: LedgerOperation, argument: string): LedgerError {
  return new LedgerError(`invalid_${operation}_arguments`, { field: argument });
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

const anything = (): boolean => true;

/**
 * The own data properties of a call's options object, read with the shared reader (`undefined` is an
 * empty object); each value is checked afterwards by its own argument rule. Unknown keys are refused
 * so that a misspelt `now` never silently becomes the database clock. Any refusal names the whole
 * argument (spec 04 §5: `details.field` is the argument).
 */
export function callOptions(operation: LedgerOperation, options: unknown, allowed: readonly string[], argument = 'options'): Record<string, unknown> {
  const rules = Object.fromEntries(allowed.map((key) => [key, anything]));
  const read = readOptions(options, rules, { name: argument, unknownKeys: 'refuse' });
  if (!read.ok) throw invalidArgument(operation, argument);
  return read.values as Record<string, unknown>;
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
  if (hasEscapedNul(json)) throw invalidArgument(operation, argument);
  return json;
}

/** Validated id, metadata and checkpoint of a new row: the first five parameters of its insert. */
export function newRow(operation: LedgerOperation, id: unknown, metadata: unknown, checkpoint: unknown, maxDocumentBytes: number): unknown[] {
  const key = invocationId(operation, id);
  const meta = callOptions(operation, metadata, METADATA_KEYS, 'metadata');
  for (const field of METADATA_KEYS) if (!isValidId(meta[field])) throw invalidArgument(operation, field);
  const json = jsonDocument(operation, 'checkpoint', checkpoint, maxDocumentBytes);
  return [key, meta.workflowId, meta.workflowVersion, meta.kind, json];
}

/** `limit` of the expiry scans: an integer 1..1000, default 100. */
export function expiredLimit(operation: LedgerOperation, value: unknown): number {
  if (value === undefined) return DEFAULT_EXPIRED_LIMIT;
  if (!Number.isSafeInteger(value) || (value as number) < 1 || (value as number) > MAX_EXPIRED_LIMIT) throw invalidArgument(operation, 'limit');
  return value as number;
}

/** The stored outcome of `failed`/`cancelled` through the projection; a throwing projection is the caller's bad argument. */
export function projectedOutcome(project: SanitizeTerminalOutcome, phase: 'failed' | 'cancelled', outcome: unknown): unknown {
  try {
    return project(phase, outcome);
  } catch {
    throw invalidArgument('finish', 'outcome');
  }
}
