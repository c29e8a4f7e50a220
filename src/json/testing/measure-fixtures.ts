import { measure } from '../measure';

/** For every limit below `size` (in steps of `step`): exceeded, with `limit < bytes ≤ size`. */
export function expectExceededBelow(value: unknown, size: number, step: number): void {
  for (let limit = 0; limit < size; limit += step) {
    const result = measure(value, limit);
    expect(result.exceeded).toBe(true);
    expect(result.bytes).toBeGreaterThan(limit);
    expect(result.bytes).toBeLessThanOrEqual(size);
  }
}
