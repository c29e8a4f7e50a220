import type { TraceIdentity, TraceIdentityKey } from '../trace.types';

/** The identity keys in the fixed order stream keys are built in. */
export const IDENTITY_KEYS: readonly TraceIdentityKey[] = Object.freeze(['run_id', 'trace_id', 'workflow_id', 'invocation_id']);

/**
 * The key of the stream named by exactly these identity members: an unambiguous JSON array of the
 * four positions (`null` where a member is not part of the subset).
 */
export function streamKey(members: TraceIdentity): string {
  return JSON.stringify(IDENTITY_KEYS.map((key) => members[key] ?? null));
}

/** The principal's "all" stream: the empty subset. */
export const ALL_STREAM_KEY = streamKey({});

/** The keys of every subset of `identity`'s present members (2^n, at most 16), the empty one first. */
export function subsetStreamKeys(identity: TraceIdentity): string[] {
  const present = IDENTITY_KEYS.filter((key) => identity[key] !== undefined);
  const keys: string[] = [];
  for (let mask = 0; mask < 1 << present.length; mask++) {
    const members: { [K in TraceIdentityKey]?: string } = {};
    present.forEach((key, bit) => {
      if (mask & (1 << bit)) members[key] = identity[key];
    });
    keys.push(streamKey(members));
  }
  return keys;
}
