// What a benchmark report says about the code it measured.
import { spawnSync } from 'node:child_process';

/** The short HEAD commit, with the number of uncommitted paths when there are any; `unknown` outside git. */
export function gitCommit() {
  const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' });
  const dirty = spawnSync('git', ['status', '--porcelain'], { encoding: 'utf8' });
  if (head.status !== 0) return 'unknown';
  const changed = dirty.stdout.split('\n').filter(Boolean).length;
  return `${head.stdout.trim()}${changed > 0 ? ` + ${changed} uncommitted paths` : ''}`;
}
