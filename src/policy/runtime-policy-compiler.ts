import { types } from 'node:util';
import { readOwnData } from '../shared/options/option-reader';
import { isSafeIntegerAtLeast } from '../shared/options/plain-object';
import { sha256Hex } from '../shared/text/sha256';
import { canonicalJson } from '../json';
import { isValidId } from '../shared/ids/id-rule';
import { isValidSubject, MAX_POLICY_ID_BYTES } from './policy-name';
import { RuntimePolicyError, type RuntimePolicyCompileErrorCode } from './runtime-policy.errors';
import type { NormalizedRules, NormalizedSelector, RuntimePolicyDescription } from './runtime-policy.types';

/** `'all'`, or names (each a well-formed string of 1..256 UTF-8 bytes); duplicates and `[]` allowed. */
export type RuntimePolicySelector = 'all' | readonly string[];

/** Allow and deny selectors of agents or tools. `deny` beats `allow`; an omitted selector is `[]`. */
export interface RuntimePolicyRules {
  /** Subjects allowed unless denied; `'all'` only for a deliberately permissive boundary. @default [] */
  allow?: RuntimePolicySelector;
  /** Subjects always denied; `'all'` denies every subject. @default [] */
  deny?: RuntimePolicySelector;
}

/** What `RuntimePolicy.compile` accepts (spec 02 §3). A key whose value is `undefined` counts as absent. */
export interface RuntimePolicySpec {
  /** 1..128 UTF-8 bytes, well-formed. @default 'policy-' + the first 16 hex digits of the fingerprint */
  id?: string;
  /** Which agents `checkAgent` lets through. @default { allow: [], deny: [] } (every agent denied) */
  agents?: RuntimePolicyRules;
  /** Which tools `checkTool` lets through. @default { allow: [], deny: [] } (every tool denied) */
  tools?: RuntimePolicyRules;
  /** Inclusive limit on the canonical JSON bytes of tool arguments; a non-negative safe integer. @default 65536 */
  maxArgumentBytes?: number;
  /** Inclusive limit on the bytes of agent input and checked content; a non-negative safe integer. @default 1048576 */
  maxContentBytes?: number;
}

/** A selector ready for membership tests: exact string equality. */
export type CompiledSelector = 'all' | ReadonlySet<string>;

export interface CompiledRules {
  readonly allow: CompiledSelector;
  readonly deny: CompiledSelector;
}

/** A validated spec with its defaults, fingerprint and description. */
export interface CompiledPolicySpec {
  readonly id: string;
  readonly fingerprint: string;
  readonly agents: CompiledRules;
  readonly tools: CompiledRules;
  readonly maxArgumentBytes: number;
  readonly maxContentBytes: number;
  readonly description: RuntimePolicyDescription;
}

export const DEFAULT_MAX_ARGUMENT_BYTES = 65_536;
export const DEFAULT_MAX_CONTENT_BYTES = 1_048_576;

const SPEC_KEYS = ['id', 'agents', 'tools', 'maxArgumentBytes', 'maxContentBytes'] as const;
const RULE_KEYS = ['allow', 'deny'] as const;

/** Marks an accessor property: its getter is never run, and the value counts as invalid. */
const ACCESSOR: unique symbol = Symbol('accessor');

/** The shared reader's view of `value` with accessors as {@link ACCESSOR}; `null` unless a plain object. */
function ownFields<K extends string>(value: unknown, known: readonly K[]): { values: Record<K, unknown>; unknown: boolean } | null {
  const own = readOwnData(value, known);
  if (own === null) return null;
  const values = { ...own.values } as Record<K, unknown>;
  for (const key of own.accessors) values[key] = ACCESSOR;
  return { values, unknown: own.unknown.length > 0 };
}

/** An array element's own data value; {@link ACCESSOR} for a getter or setter. */
function ownElement(array: readonly unknown[], index: number): unknown {
  const descriptor = Object.getOwnPropertyDescriptor(array, index);
  if (descriptor === undefined) return undefined;
  return 'value' in descriptor ? descriptor.value : ACCESSOR;
}

/** `'all'`, or the de-duplicated names sorted by UTF-16 code units; `null` when invalid. */
function normalizeSelector(value: unknown): NormalizedSelector | null {
  if (value === undefined) return Object.freeze([]);
  if (value === 'all') return 'all';
  if (typeof value !== 'object' || value === null || types.isProxy(value) || !Array.isArray(value)) return null;
  if (Object.getPrototypeOf(value) !== Array.prototype) return null;
  const names = new Set<string>();
  for (let index = 0; index < value.length; index++) {
    const name = ownElement(value, index);
    if (!isValidSubject(name)) return null;
    names.add(name);
  }
  return Object.freeze([...names].sort());
}

function normalizeRules(value: unknown, kind: 'agents' | 'tools'): NormalizedRules {
  const fail = (code: RuntimePolicyCompileErrorCode) => new RuntimePolicyError(code, { kind });
  if (value === undefined) return Object.freeze({ allow: Object.freeze([]), deny: Object.freeze([]) });
  const rules = ownFields(value, RULE_KEYS);
  if (rules === null) throw fail('invalid_runtime_policy_rules');
  if (rules.unknown) throw fail('unsupported_runtime_policy_rules');
  const allow = normalizeSelector(rules.values.allow);
  if (allow === null) throw fail('invalid_runtime_policy_allow');
  const deny = normalizeSelector(rules.values.deny);
  if (deny === null) throw fail('invalid_runtime_policy_deny');
  return Object.freeze({ allow, deny });
}

function limitOf(value: unknown, fallback: number, code: RuntimePolicyCompileErrorCode): number {
  if (value === undefined) return fallback;
  if (!isSafeIntegerAtLeast(value, 0)) throw new RuntimePolicyError(code);
  return value;
}

const compileSelector = (selector: NormalizedSelector): CompiledSelector =>
  selector === 'all' ? 'all' : new Set(selector);

const compileRules = (rules: NormalizedRules): CompiledRules =>
  Object.freeze({ allow: compileSelector(rules.allow), deny: compileSelector(rules.deny) });

/**
 * Validates a policy spec in the order of spec 02 §3 (first failure wins) and computes its
 * fingerprint: SHA-256 of the canonical JSON of the normalised rules and limits, without the id.
 * Reads own data properties only: getters and Proxy traps never run, and an accessor is invalid.
 */
export function compilePolicySpec(spec: unknown): CompiledPolicySpec {
  const own = ownFields(spec, SPEC_KEYS);
  if (own === null) throw new RuntimePolicyError('invalid_runtime_policy');
  if (own.unknown) throw new RuntimePolicyError('unsupported_runtime_policy_options');
  const agents = normalizeRules(own.values.agents, 'agents');
  const tools = normalizeRules(own.values.tools, 'tools');
  const maxArgumentBytes = limitOf(own.values.maxArgumentBytes, DEFAULT_MAX_ARGUMENT_BYTES, 'invalid_max_argument_bytes');
  const maxContentBytes = limitOf(own.values.maxContentBytes, DEFAULT_MAX_CONTENT_BYTES, 'invalid_max_content_bytes');
  const givenId = own.values.id;
  if (givenId !== undefined && !isValidId(givenId, MAX_POLICY_ID_BYTES)) {
    throw new RuntimePolicyError('invalid_runtime_policy_id');
  }

  const fingerprint = sha256Hex(
    canonicalJson({ agents, tools, max_argument_bytes: maxArgumentBytes, max_content_bytes: maxContentBytes }),
  );
  const id = givenId ?? `policy-${fingerprint.slice(0, 16)}`;
  const description: RuntimePolicyDescription = Object.freeze({
    schema_version: 1,
    id,
    fingerprint,
    agents,
    tools,
    max_argument_bytes: maxArgumentBytes,
    max_content_bytes: maxContentBytes,
  });
  return Object.freeze({
    id,
    fingerprint,
    agents: compileRules(agents),
    tools: compileRules(tools),
    maxArgumentBytes,
    maxContentBytes,
    description,
  });
}
