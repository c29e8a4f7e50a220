import { inOrderTrajectoryScore, trajectoryMatches, type TrajectoryCall } from './tool-trajectory';

const a: TrajectoryCall = { name: 'a', args: { x: 1 } };
const b: TrajectoryCall = { name: 'b', args: {} };
const c: TrajectoryCall = { name: 'c', args: { nested: { k: [1, 2] } } };

describe('trajectoryMatches (spec 05 §7 tool_trajectory)', () => {
  it('matches equal lists, whatever the key order of the arguments', () => {
    expect(trajectoryMatches([{ name: 'a', args: { x: 1, y: { p: 1, q: 2 } } }], [{ name: 'a', args: { y: { q: 2, p: 1 }, x: 1 } }])).toBe(true);
    expect(trajectoryMatches([], [])).toBe(true);
  });

  it('does not match lists of different lengths', () => {
    expect(trajectoryMatches([a, b], [a])).toBe(false);
    expect(trajectoryMatches([a], [a, a])).toBe(false);
  });

  it('does not match another name, other arguments or another order', () => {
    expect(trajectoryMatches([a], [{ name: 'z', args: { x: 1 } }])).toBe(false);
    expect(trajectoryMatches([a], [{ name: 'a', args: { x: 2 } }])).toBe(false);
    expect(trajectoryMatches([a], [{ name: 'a', args: { x: '1' } }])).toBe(false);
    expect(trajectoryMatches([a, b], [b, a])).toBe(false);
  });
});

describe('inOrderTrajectoryScore (tool_trajectory_in_order)', () => {
  it('gives partial credit by the longest common subsequence: [a,b,c] against [a,c] → 2/3', () => {
    expect(inOrderTrajectoryScore([a, b, c], [a, c])).toBeCloseTo(2 / 3, 12);
  });

  it('scores 1 for the exact list and for extra calls around the expected ones', () => {
    expect(inOrderTrajectoryScore([a, b, c], [a, b, c])).toBe(1);
    expect(inOrderTrajectoryScore([a, b], [c, a, c, b, c])).toBe(1);
  });

  it('keeps the order: [a,b] against [b,a] → 1/2', () => {
    expect(inOrderTrajectoryScore([a, b], [b, a])).toBe(0.5);
  });

  it('counts a repeated expected call once per actual call: [a,a] against [a] → 1/2', () => {
    expect(inOrderTrajectoryScore([a, a], [a])).toBe(0.5);
  });

  it('treats a call with other arguments as another call', () => {
    expect(inOrderTrajectoryScore([a, b], [{ name: 'a', args: { x: 9 } }, b])).toBe(0.5);
    expect(inOrderTrajectoryScore([{ name: 'a', args: { x: 1, y: 2 } }], [{ name: 'a', args: { y: 2, x: 1 } }])).toBe(1);
  });

  it('scores 0 without any expected call made', () => {
    expect(inOrderTrajectoryScore([a, b], [])).toBe(0);
    expect(inOrderTrajectoryScore([a, b], [c])).toBe(0);
  });

  it('with no expected call: 1 when no call was made, 0 otherwise', () => {
    expect(inOrderTrajectoryScore([], [])).toBe(1);
    expect(inOrderTrajectoryScore([], [a])).toBe(0);
  });
});
