import fc from 'fast-check';
import { normalizeSqlExpression, sameSqlExpression } from './sql-expression';

describe('normalizeSqlExpression', () => {
  it('collapses whitespace outside quotes and drops it inside parentheses', () => {
    expect(normalizeSqlExpression("  phase   =\n 'running'::text ")).toBe("phase = 'running'::text");
    expect(normalizeSqlExpression('lower( name )')).toBe('lower(name)');
  });

  it('keeps quoted literals and identifiers exactly', () => {
    expect(normalizeSqlExpression("a = 'x   y'")).toBe("a = 'x   y'");
    expect(normalizeSqlExpression(`"Odd  Name" = 'it''s  (here'`)).toBe(`"Odd  Name" = 'it''s  (here'`);
  });

  it('drops parentheses that wrap the whole expression, and only those', () => {
    expect(normalizeSqlExpression("(phase = 'running'::text)")).toBe("phase = 'running'::text");
    expect(normalizeSqlExpression('((format + 1))')).toBe('format + 1');
    expect(normalizeSqlExpression('(a = 1) AND (b = 2)')).toBe('(a = 1) AND (b = 2)');
    expect(normalizeSqlExpression("(a = ')')")).toBe("a = ')'");
  });

  it('tells different expressions apart', () => {
    expect(sameSqlExpression('format = 1', '(format = 1)')).toBe(true);
    expect(sameSqlExpression('format = 1', 'format = 2')).toBe(false);
    expect(sameSqlExpression("a = 'x y'", "a = 'x  y'")).toBe(false);
  });

  it('is idempotent', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('(', ')', ' ', "'", '"', 'a', '=', '\n') }), (text) => {
        const once = normalizeSqlExpression(text);
        expect(normalizeSqlExpression(once)).toBe(once);
      }),
    );
  });
});
