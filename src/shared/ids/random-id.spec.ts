import { randomId } from './random-id';

describe('randomId', () => {
  it('is the prefix followed by 24 URL-safe characters', () => {
    expect(randomId('permit-')).toMatch(/^permit-[A-Za-z0-9_-]{24}$/);
    expect(randomId('request-')).toMatch(/^request-[A-Za-z0-9_-]{24}$/);
  });

  it('decodes to 18 bytes of base64url without padding', () => {
    const body = randomId('x-').slice(2);
    expect(body).not.toContain('=');
    expect(Buffer.from(body, 'base64url')).toHaveLength(18);
  });

  it('never repeats across several refills of its pool', () => {
    const ids = new Set<string>();
    const count = 2048 * 3 + 17;
    for (let i = 0; i < count; i++) ids.add(randomId('r-'));
    expect(ids.size).toBe(count);
  });
});
