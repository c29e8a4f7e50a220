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

  it('escapes quotes and backslashes so a field cannot be faked', () => {
    expect(logField('a" wait_ms="0\\')).toBe('"a\\" wait_ms=\\"0\\\\"');
  });
});
