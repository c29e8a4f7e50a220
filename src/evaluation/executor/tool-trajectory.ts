import { canonicalJson } from '../../json';
import type { JsonValue } from '../../json';

/** A tool call as the trajectory metrics compare it: its name and its arguments. */
export interface TrajectoryCall {
  readonly name: string;
  readonly args: JsonValue;
}

/**
 * The `tool_trajectory` verdict of one case (spec 05 §7): both lists have the same length and each
 * pair has the same name and canonical-JSON-equal arguments (so key order never matters).
 *
 * @example
 * trajectoryMatches([{ name: 'a', args: { x: 1, y: 2 } }], [{ name: 'a', args: { y: 2, x: 1 } }]); // true
 */
export function trajectoryMatches(expected: readonly TrajectoryCall[], actual: readonly TrajectoryCall[]): boolean {
  if (expected.length !== actual.length) return false;
  for (let i = 0; i < expected.length; i += 1) if (callKey(expected[i]) !== callKey(actual[i])) return false;
  return true;
}

/**
 * The `tool_trajectory_in_order` score of one case, partial credit for a trajectory that keeps the
 * expected order: the length of the longest common subsequence of the two lists (calls equal as in
 * {@link trajectoryMatches}) divided by the number of expected calls. Extra actual calls cost nothing
 * unless they displace expected ones. An empty expected list scores 1 when no call was made and 0
 * otherwise, so "expect no tool call" is a real check.
 *
 * @example
 * inOrderTrajectoryScore([a, b, c], [a, c]); // 2/3
 * inOrderTrajectoryScore([a, b], [b, a]);    // 1/2
 */
export function inOrderTrajectoryScore(expected: readonly TrajectoryCall[], actual: readonly TrajectoryCall[]): number {
  if (expected.length === 0) return actual.length === 0 ? 1 : 0;
  return longestCommonSubsequence(interned(expected, actual)) / expected.length;
}

function callKey(call: TrajectoryCall): string {
  return canonicalJson([call.name, call.args]);
}

/** Both lists as small integers (equal calls, equal numbers), so the quadratic part compares numbers. */
function interned(expected: readonly TrajectoryCall[], actual: readonly TrajectoryCall[]): [Int32Array, Int32Array] {
  const ids = new Map<string, number>();
  const idOf = (call: TrajectoryCall): number => {
    const key = callKey(call);
    let id = ids.get(key);
    if (id === undefined) {
      id = ids.size;
      ids.set(key, id);
    }
    return id;
  };
  return [Int32Array.from(expected, idOf), Int32Array.from(actual, idOf)];
}

/** Classic dynamic programme over two rows: O(n·m) time, O(m) memory. */
function longestCommonSubsequence([a, b]: [Int32Array, Int32Array]): number {
  let previous = new Int32Array(b.length + 1);
  let current = new Int32Array(b.length + 1);
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      current[j] = a[i - 1] === b[j - 1] ? previous[j - 1] + 1 : Math.max(previous[j], current[j - 1]);
    }
    [previous, current] = [current, previous];
  }
  return previous[b.length];
}
