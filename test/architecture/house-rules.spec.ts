/**
 * The rules of the house that are about files and mechanisms rather than imports (docs/architecture.md;
 * the import rules are dependency-cruiser's, `.dependency-cruiser.js`): small files, a runner folder
 * that reads as a table of contents, and one of each shared mechanism.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const SRC = path.join(ROOT, 'src');
const MAX_LINES = 300;
const MAX_RUNNER_ROOT_FILES = 15;

/** Every file under `dir`, as paths relative to the repository. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full) : [path.relative(ROOT, full)];
  });
}

const sources = filesUnder(SRC).filter((file) => file.endsWith('.ts') && !file.endsWith('.spec.ts'));
const text = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8');
/** The source files whose text matches `pattern`. */
const filesMatching = (pattern: RegExp): string[] => sources.filter((file) => pattern.test(text(file)));
/** The same among the files that ship (test fixtures in `testing/` folders mint ids of their own). */
const shippedFilesMatching = (pattern: RegExp): string[] => filesMatching(pattern).filter((file) => !file.includes('/testing/'));

describe('the house', () => {
  it(`has no source file over ${MAX_LINES} lines`, () => {
    const long = sources.map((file) => ({ file, lines: text(file).split('\n').length - 1 })).filter(({ lines }) => lines > MAX_LINES);
    expect(long).toEqual([]);
  });

  it(`keeps at most ${MAX_RUNNER_ROOT_FILES} files directly in src/runner`, () => {
    const direct = readdirSync(path.join(SRC, 'runner')).filter((name) => statSync(path.join(SRC, 'runner', name)).isFile());
    expect(direct.length).toBeLessThanOrEqual(MAX_RUNNER_ROOT_FILES);
  });

  it('reads options with one reader and reports failures in one vocabulary ({field} or {fields})', () => {
    expect(filesMatching(/readStrictOptions|strict-options|\bunknown_keys\s*:/)).toEqual([]);
    // the names of what failed are `field`/`fields`, never `keys`/`option`/`options`
    expect(filesMatching(/Error\(\s*'[a-z_]+'\s*,\s*\{[^}]*\b(keys|option|options)\s*[:,}]/)).toEqual([]);
  });

  it('writes the token id pattern once', () => {
    expect(filesMatching(/\/\^\[A-Za-z0-9\._:-\]/)).toEqual(['src/shared/ids/id-rule.ts']);
  });

  it('mints each kind of id in one function', () => {
    expect(shippedFilesMatching(/`eval-\$\{/)).toEqual(['src/evaluation/eval-scope.ts']);
    expect(shippedFilesMatching(/randomId\('ses-'\)/)).toEqual(['src/runner/session-id.ts']);
    expect(shippedFilesMatching(/randomId\('run-'\)/)).toHaveLength(1);
    expect(shippedFilesMatching(/randomId\('inv-'\)/)).toHaveLength(1);
    expect(shippedFilesMatching(/randomId\('request-'\)/)).toHaveLength(1);
    expect(shippedFilesMatching(/randomId\('permit-'\)/)).toHaveLength(1);
    expect(shippedFilesMatching(/`decision-\$\{/)).toHaveLength(1);
  });

  it('names every telemetry event through TelemetryEvents, never by a string at the call', () => {
    expect(filesMatching(/emitSafely\([^,]+,\s*['"`]/)).toEqual([]);
    expect(filesMatching(/\.emit\(\s*['"`]agent_runtime\./)).toEqual([]);
  });
});
