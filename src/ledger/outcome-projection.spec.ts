import { defaultSanitizeTerminalOutcome, REASON_CODE } from './outcome-projection';

describe('defaultSanitizeTerminalOutcome', () => {
  it('keeps the first of reason, code, error_code that is a code, and nothing else', () => {
    expect(defaultSanitizeTerminalOutcome('failed', { reason: 'tool_timeout', message: 'Error: secret' })).toEqual({ reason: 'tool_timeout' });
    expect(defaultSanitizeTerminalOutcome('failed', { code: 'e.conn:reset-1' })).toEqual({ reason: 'e.conn:reset-1' });
    expect(defaultSanitizeTerminalOutcome('cancelled', { error_code: 'user_cancelled' })).toEqual({ reason: 'user_cancelled' });
    expect(defaultSanitizeTerminalOutcome('failed', { reason: 'Not A Code', code: 'fallback' })).toEqual({ reason: 'fallback' });
    expect(defaultSanitizeTerminalOutcome('failed', Object.assign(Object.create(null), { reason: 'x' }))).toEqual({ reason: 'x' });
  });

  it('is unspecified for anything else, never running user code', () => {
    let touched = false;
    const getter = Object.defineProperty({}, 'reason', { get: () => ((touched = true), 'sneaky'), enumerable: true });
    const proxy = new Proxy({ reason: 'proxied' }, { getPrototypeOf: () => ((touched = true), Object.prototype) });
    const inherited = Object.create({ reason: 'inherited' });
    for (const outcome of [undefined, null, 'tool_timeout', 42, ['reason'], new Error('boom'), getter, proxy, inherited, { reason: 'x'.repeat(129) }, { reason: 7 }, { code: '' }]) {
      expect(defaultSanitizeTerminalOutcome('failed', outcome)).toEqual({ reason: 'unspecified' });
    }
    expect(touched).toBe(false);
  });

  it('reason codes are 1..128 characters of a-z 0-9 _ . : -', () => {
    expect(REASON_CODE.test('a'.repeat(128))).toBe(true);
    expect(REASON_CODE.test('a'.repeat(129))).toBe(false);
    expect(REASON_CODE.test('A')).toBe(false);
  });
});
