import { RuntimeServiceError } from '../runtime-service.errors';
import { deliveryErrorCode, retryDelayMs } from './outbox-retry';

const settings = { backoffBaseMs: 250, backoffMaxMs: 30_000 };

describe('§6.4 retry delay', () => {
  it('doubles from backoffBaseMs per attempt, capped at backoffMaxMs', () => {
    expect([1, 2, 3, 4, 8, 9, 10].map((attempts) => retryDelayMs(attempts, settings, () => 0))).toEqual([250, 500, 1000, 2000, 30_000, 30_000, 30_000]);
  });

  it('adds up to 10 % jitter from the random source', () => {
    expect(retryDelayMs(1, settings, () => 0.5)).toBe(262);
    expect(retryDelayMs(3, settings, () => 0.999999)).toBe(1099);
    expect(retryDelayMs(10, settings, () => 0.25)).toBe(30_750);
  });

  it('a random source out of range is clamped, never beyond 10 %', () => {
    expect(retryDelayMs(1, settings, () => 7)).toBe(275);
    expect(retryDelayMs(1, settings, () => -1)).toBe(250);
    expect(retryDelayMs(1, settings, () => NaN)).toBe(250);
  });
});

describe('§6.4 last_error is a code', () => {
  it('keeps the code of an error of the package', () => {
    expect(deliveryErrorCode(new RuntimeServiceError('memory_epoch_fenced'))).toBe('memory_epoch_fenced');
    expect(deliveryErrorCode(new RuntimeServiceError('timeout'))).toBe('timeout');
  });

  it('never keeps anything of a foreign error', () => {
    expect(deliveryErrorCode(new Error('secret content'))).toBe('memory_outbox_delivery_failed');
    expect(deliveryErrorCode({ code: 'memory_epoch_fenced' })).toBe('memory_outbox_delivery_failed');
    expect(deliveryErrorCode('memory_epoch_fenced')).toBe('memory_outbox_delivery_failed');
  });
});
