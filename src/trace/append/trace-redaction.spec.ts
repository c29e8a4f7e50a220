import fc from 'fast-check';
import { REDACTED, redactSecrets, SECRET_PATTERNS } from './trace-redaction';

const JWT = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U';

describe('redactSecrets (spec 06 §4 step 4)', () => {
  it.each([
    ['a bearer token', 'Authorization: Bearer abcDEF123456._~+/-==', 'Authorization: [redacted]'],
    ['a bearer token in any case', 'auth bearer 0123456789abcdef done', 'auth [redacted] done'],
    ['a password= pair', 'postgres://db?password=hunter2&sslmode=on', 'postgres://db?[redacted]&sslmode=on'],
    ['a secret= pair with spaces around =', 'client secret = abc123; next', 'client [redacted]; next'],
    ['a token= pair', 'retry token=XYZ, then', 'retry [redacted], then'],
    ['an api_key= pair', 'url?api_key=k-123', 'url?[redacted]'],
    ['an api-key= pair', 'x-api-key=k-123 sent', 'x-[redacted] sent'],
    ['a compound access_token= pair', 'cb?access_token=ya29.a0AfH6&state=1', 'cb?[redacted]&state=1'],
    ['a quoted value with spaces', 'PASSWORD="correct horse battery" ok', '[redacted] ok'],
    ['a JWT', `jwt ${JWT} end`, 'jwt [redacted] end'],
    ['an unsigned JWT', 'eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.', '[redacted]'],
    ['an sk- key', 'key sk-abcdefghijklmnop1234 used', 'key [redacted] used'],
    ['an sk-proj- key', 'sk-proj-AbC_dEf-0123456789xyz', '[redacted]'],
    ['an sk-ant- key', 'sk-ant-api03-abcdefghijklmnop', '[redacted]'],
    ['an sk_live_ key', 'stripe sk_live_51HqLyjWDarjtT1zdp7dc', 'stripe [redacted]'],
    ['several secrets in one text', `Bearer abcdefgh12345678 and token=x and ${JWT}`, '[redacted] and [redacted] and [redacted]'],
  ])('replaces %s by [redacted]', (_name, text, expected) => {
    expect(redactSecrets(text)).toBe(expected);
  });

  it.each([
    ['an event name', 'runner.tool.call'],
    ['a model name', 'gpt-4o-mini'],
    ['the word bearer alone', 'the bearer of news'],
    ['a short sk- word', 'sk-learn'],
    ['sk- inside a word', 'task-abcdefghijklmnopqrstuv'],
    ['a counter named like a secret', 'max_tokens=100 tokens: 5'],
    ['a key name without a value', 'password= '],
    ['a base64 string that is not a JWT', 'YWJjZGVmZ2hpams.bG1ub3A.cXJz'],
    ['an empty string', ''],
  ])('leaves %s alone', (_name, text) => {
    expect(redactSecrets(text)).toBe(text);
  });

  it('is idempotent: redacted text has nothing left to redact', () => {
    const once = redactSecrets(`Bearer abcdefgh12345678 password=x ${JWT} sk-abcdefghijklmnopqrstu`);
    expect(redactSecrets(once)).toBe(once);
    expect(once).toBe([REDACTED, REDACTED, REDACTED, REDACTED].join(' '));
  });

  it('keeps a small documented set of global patterns, each starting at a word boundary', () => {
    expect(SECRET_PATTERNS).toHaveLength(4);
    for (const pattern of SECRET_PATTERNS) {
      expect(pattern.flags).toContain('g');
      expect(pattern.source.startsWith('\\b')).toBe(true);
    }
  });

  it('never backtracks catastrophically on long near-miss texts', () => {
    const nearMisses = ['a'.repeat(100_000), 'password'.repeat(10_000), 'eyJ'.repeat(30_000), `${'sk-'.repeat(30_000)}x`, `bearer ${'a'.repeat(7)} `.repeat(10_000), 'token_'.repeat(20_000)];
    const started = Date.now();
    for (const text of nearMisses) redactSecrets(text);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('removes a generated secret from any surrounding text (property)', () => {
    const base64url = fc.string({ unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'), minLength: 16, maxLength: 40 });
    const secret = fc.oneof(
      base64url.map((s) => `sk-${s}`),
      base64url.map((s) => `Bearer ${s}`),
      base64url.map((s) => `eyJ${s}.${s}.${s}`),
      fc.tuple(fc.constantFrom('password', 'secret', 'token', 'api_key', 'refresh_token'), base64url).map(([key, s]) => `${key}=${s}`),
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), secret, fc.string({ maxLength: 30 }), (before, value, after) => {
        const text = `${before} ${value} ${after}`;
        const redacted = redactSecrets(text);
        expect(redacted).toContain(REDACTED);
        // the secret's random part is gone (it is at least 16 characters, so it cannot reappear by chance)
        expect(redacted).not.toContain(value.slice(-16));
      }),
    );
  });
});
