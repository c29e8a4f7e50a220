import { createHash } from 'node:crypto';
import { epochBoundJobId } from './outbox-enqueue';

describe('§6.3 epoch-bound job ids', () => {
  it('is the base id at epoch 0', () => {
    expect(epochBoundJobId('session-1:evt-a:evt-b', 0)).toBe('session-1:evt-a:evt-b');
  });

  it('is memout- and 40 hex digits of SHA-256 over canonical JSON [baseJobId, epoch] after an erasure', () => {
    const expected = createHash('sha256').update('["session-1:evt-a:evt-b",3]', 'utf8').digest('hex').slice(0, 40);
    expect(epochBoundJobId('session-1:evt-a:evt-b', 3)).toBe(`memout-${expected}`);
    expect(epochBoundJobId('session-1:evt-a:evt-b', 1)).toMatch(/^memout-[0-9a-f]{40}$/);
    expect(epochBoundJobId('session-1:evt-a:evt-b', 1)).not.toBe(epochBoundJobId('session-1:evt-a:evt-b', 2));
  });
});
