import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstClosedDirectory } from './postgres-os-user';

describe('the postgres OS user', () => {
  it('names the first directory on the way that another OS user cannot enter, by owner, group and other bits', () => {
    const base = mkdtempSync(join(tmpdir(), 'agent-runtime-perm-'));
    const inner = join(base, 'inner');
    mkdirSync(inner);
    const stranger = { uid: 54_321, gid: 54_321 };
    const owner = { uid: process.getuid!(), gid: 54_321 };
    try {
      expect(firstClosedDirectory(inner, stranger)).toBe(base);
      expect(firstClosedDirectory(inner, owner)).toBeUndefined();
      chmodSync(base, 0o701);
      expect(firstClosedDirectory(inner, stranger)).toBeUndefined();
      chmodSync(base, 0o601);
      expect(firstClosedDirectory(inner, owner)).toBe(base);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});
