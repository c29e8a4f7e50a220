import { logField } from './log-escape';

describe('logField', () => {
  it('quotes a plain value', () => {
    expect(logField('support-agent')).toBe('"support-agent"');
  });

  it('escapes line breaks, ANSI escapes, C1 controls and separators', () => {
    const field = logField('a\r\n\u001b[31mFAKE\u0085\u2028');
    expect(field).toBe('"a\\u000d\\u000a\\u001b[31mFAKE\\u0085\\u2028"');
    expect(field).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028]/);
  });

  it('escapes bidi overrides, isolates and invisible format characters, which reorder how a line reads', () => {
    expect(logField('ab\u202ecd\u2066x\u2069\u200b\u200f\ufeff')).toBe('"ab\\u202ecd\\u2066x\\u2069\\u200b\\u200f\\ufeff"');
    // letters of other scripts stay as they are
    expect(logField('müller-日本-عربي')).toBe('"müller-日本-عربي"');
  });

  it('escapes quotes and backslashes so a field cannot be faked', () => {
    expect(logField('a" wait_ms="0\\')).toBe('"a\\" wait_ms=\\"0\\\\"');
  });
});
