import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { ROOT } from './support/shell-examples';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { docFiles } = require('../../scripts/docs/doc-blocks.cjs') as { docFiles: (root: string) => string[] };

/** The modules of the README's table, each with its page `docs/<module>.md`. */
const MODULES = ['admission', 'policy', 'ledger', 'runner', 'trace', 'evaluation', 'services', 'cluster', 'observability', 'health', 'http', 'database', 'testing', 'ai-sdk', 'adk', 'cli', 'installation'];

/** Pages for contributors rather than users, which may name the repository's internals. */
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const userPages = docFiles(ROOT);

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(file: string): Set<string> {
  const text = read(file).replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map(([, heading]) => anchorOf(heading)));
}

describe('the docs a user reads', () => {
  it('the README stays short: at most 250 lines', () => {
    expect(read('README.md').split('\n').length).toBeLessThanOrEqual(250);
  });

  it('the README links every module to its page, and every page exists', () => {
    const linked = [...read('README.md').matchAll(/\]\(docs\/([a-z-]+)\.md\)/g)].map(([, name]) => name);
    expect(MODULES.filter((name) => !linked.includes(name))).toEqual([]);
    expect(MODULES.filter((name) => !existsSync(path.join(ROOT, 'docs', `${name}.md`)))).toEqual([]);
  });

  it.each(userPages)('%s links only to files and headings that exist', (file) => {
    const broken: string[] = [];
    const text = read(file).replace(/```[\s\S]*?```/g, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue;
      const [relative, anchor] = target.split('#');
      const linked = relative ? path.normalize(path.join(path.dirname(file), relative)) : file;
      if (!existsSync(path.join(ROOT, linked))) broken.push(target);
      else if (anchor && linked.endsWith('.md') && !anchorsOf(linked).has(anchor)) broken.push(target);
    }
    expect(broken).toEqual([]);
  });

  it.each(userPages)('%s stands alone: no spec the user does not have, no stale promise', (file) => {
    const text = read(file);
    const found = [/\bspec\/[\w.-]+/g, /\bspecs? \d{2}\b/gi, /§/g, /arrive module by module/gi, /\bfuture work\b/gi, /\bissue \d+\b/gi, /where the spec was silent/gi]
      .flatMap((pattern) => [...text.matchAll(pattern)].map(([match]) => match));
    expect(found).toEqual([]);
  });
});
