import { isSafeIntegerAtLeast } from './plain-object';

/** A safe integer in `min..max` (inclusive). */
export const integerIn =
  (min: number, max: number = Number.MAX_SAFE_INTEGER) =>
  (value: unknown): boolean =>
    isSafeIntegerAtLeast(value, min) && value <= max;

/** One of the given primitive values. */
export const oneOf =
  (...allowed: readonly unknown[]) =>
  (value: unknown): boolean =>
    allowed.includes(value);

export const isBoolean = (value: unknown): boolean => typeof value === 'boolean';

export const isFunction = (value: unknown): boolean => typeof value === 'function';

/** A finite number > 0. */
export const isPositiveFinite = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value > 0;

/** A non-empty string. */
export const isNonEmptyString = (value: unknown): boolean => typeof value === 'string' && value.length > 0;
