import { sha256Hex } from './sha256';

describe('sha256Hex', () => {
  it('matches the FIPS 180-2 test vector for "abc"', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('hashes the empty string to the published empty digest', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('hashes a string as its UTF-8 bytes', () => {
    expect(sha256Hex('é😀')).toBe(sha256Hex(Buffer.from('é😀', 'utf8')));
    expect(sha256Hex('é')).not.toBe(sha256Hex(Buffer.from('é', 'latin1')));
  });

  it('returns 64 lowercase hex digits', () => {
    expect(sha256Hex(new Uint8Array([1, 2, 3]))).toMatch(/^[0-9a-f]{64}$/);
  });
});
