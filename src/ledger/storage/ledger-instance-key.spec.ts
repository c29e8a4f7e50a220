import { createHash } from 'node:crypto';
import { instanceLockKey } from './ledger-instance-key';

describe('instanceLockKey', () => {
  it('is the first 8 bytes, signed big-endian, of SHA-256 over the prefixed instance id', () => {
    const digest = createHash('sha256').update('agent_runtime.ledger.instance:abc').digest();
    expect(instanceLockKey('abc')).toBe(digest.readBigInt64BE(0).toString());
    expect(instanceLockKey('abc')).toBe('7999519646760206500');
    expect(BigInt(instanceLockKey('worker-7'))).toBeGreaterThanOrEqual(-(2n ** 63n));
  });
});
