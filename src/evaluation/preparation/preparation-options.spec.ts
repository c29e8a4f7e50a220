import { availableParallelism } from 'node:os';
import { thrown } from '../../shared/testing/thrown';
import { EvalServiceError } from '../eval.errors';
import { defaultPreparationThreads, resolvePreparationOptions } from './preparation-options';

const refusal = (value: unknown): EvalServiceError => thrown(() => resolvePreparationOptions(value), EvalServiceError);

describe('resolvePreparationOptions (spec 05 §1 `preparation`)', () => {
  it('applies the defaults: 64 pending, 1000 ms, 64 MiB, min(4, cores) threads', () => {
    const expected = { maxPending: 64, taskTimeoutMs: 1000, maxOldGenerationSizeMb: 64, threads: Math.min(4, availableParallelism()) };
    expect(resolvePreparationOptions(undefined)).toEqual(expected);
    expect(resolvePreparationOptions({})).toEqual(expected);
    expect(defaultPreparationThreads()).toBe(expected.threads);
    expect(Object.isFrozen(resolvePreparationOptions(undefined))).toBe(true);
  });

  it.each([
    ['maxPending', 1, 64],
    ['taskTimeoutMs', 1, 1000],
    ['maxOldGenerationSizeMb', 16, 256],
    ['threads', 1, 16],
  ])('accepts %s from %i to %i and refuses values outside or not integers', (key, min, max) => {
    expect(resolvePreparationOptions({ [key]: min })).toMatchObject({ [key]: min });
    expect(resolvePreparationOptions({ [key]: max })).toMatchObject({ [key]: max });
    for (const bad of [min - 1, max + 1, min + 0.5, String(min), null, NaN]) {
      const error = refusal({ [key]: bad });
      expect(error.code).toBe('invalid_eval_service_options');
      expect(error.details).toEqual({ field: `preparation.${key}` });
    }
  });

  it('refuses unknown keys, naming them sorted under `preparation`', () => {
    expect(refusal({ threads: 2, zeta: 1, alpha: 2 }).details).toEqual({ fields: ['preparation.alpha', 'preparation.zeta'] });
    expect(refusal({ threads: 2, zeta: 1 }).details).toEqual({ field: 'preparation.zeta' });
  });

  it.each([['null', null], ['a number', 4], ['an array', []], ['a class instance', new (class Options {})()]])('refuses %s as the whole option', (_name, value) => {
    const error = refusal(value);
    expect(error.code).toBe('invalid_eval_service_options');
    expect(error.details).toEqual({ field: 'preparation' });
  });

  it('never calls a getter', () => {
    const getter = jest.fn(() => 2);
    expect(refusal(Object.defineProperty({}, 'threads', { get: getter, enumerable: true })).details).toEqual({ field: 'preparation.threads' });
    expect(getter).not.toHaveBeenCalled();
  });
});
