/**
 * Textual normalisation of SQL expressions printed by `pg_get_expr` / `pg_get_indexdef` and of
 * the ones a `TableSpec` declares: whitespace outside quotes is collapsed, and parentheses that
 * wrap the whole expression are dropped (`pg_get_expr` prints a predicate as `(a = 1)`, a
 * declaration may say `a = 1`). Quoted literals and identifiers are left exactly as written.
 */
export function normalizeSqlExpression(expression: string): string {
  let text = collapseWhitespace(expression);
  while (isWrappedInParentheses(text)) text = collapseWhitespace(text.slice(1, -1));
  return text;
}

/** True when two expressions are the same after {@link normalizeSqlExpression}. */
export function sameSqlExpression(a: string, b: string): boolean {
  return normalizeSqlExpression(a) === normalizeSqlExpression(b);
}

/**
 * `text` with each run of whitespace outside quotes collapsed to one space (none after `(` or
 * before `)`) and leading/trailing whitespace dropped; quoted text is kept exactly.
 */
export function collapseWhitespace(text: string): string {
  let out = '';
  let quote: string | null = null;
  let pendingSpace = false;
  for (const char of text) {
    if (quote !== null) {
      out += char;
      // a doubled quote inside a literal closes and reopens it, which leaves the state unchanged
      if (char === quote) quote = null;
      continue;
    }
    if (/\s/.test(char)) {
      pendingSpace = true;
      continue;
    }
    if (pendingSpace && out.length > 0 && !out.endsWith('(') && char !== ')') out += ' ';
    pendingSpace = false;
    out += char;
    if (char === "'" || char === '"') quote = char;
  }
  return out;
}

function isWrappedInParentheses(text: string): boolean {
  if (!text.startsWith('(') || !text.endsWith(')')) return false;
  let depth = 0;
  let quote: string | null = null;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i];
    if (quote !== null) {
      if (char === quote) quote = null;
    } else if (char === "'" || char === '"') {
      quote = char;
    } else if (char === '(') {
      depth += 1;
    } else if (char === ')') {
      depth -= 1;
      if (depth === 0) return i === text.length - 1;
    }
  }
  return false;
}
