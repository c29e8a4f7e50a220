/**
 * The rules of `.dependency-cruiser.js` catch what they name: each violation below, planted in a small
 * tree laid out like `src/`, fails `depcruise` with its rule, and the same tree without them passes.
 * `.ci/run` runs the rules over the real `src/` (`npm run lint:deps`).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..');
const DEPCRUISE = path.join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
/** `@nestjs/common` as resolved through the tree's symlinked `node_modules` (depcruise reports the real path). */
const NEST_COMMON = /node_modules\/@nestjs\/common\/index\.js$/;

/** A tree that follows the rules: a kernel file, a core and its Nest wrapper, a feature above another. */
const CLEAN: Record<string, string> = {
  'src/shared/time/clock.ts': 'export const now = (): number => 0;\n',
  'src/admission/admission-controller.ts': "import { now } from '../shared/time/clock';\nexport const admit = (): number => now();\n",
  'src/admission/admission.guard.ts': "import { Injectable } from '@nestjs/common';\nimport { admit } from './admission-controller';\n@Injectable()\nexport class Guard { run = admit; }\n",
  'src/runner/runner.ts': "import { admit } from '../admission/admission-controller';\nexport const runOnce = (): number => admit();\n",
  'test/support/helper.ts': "import { runOnce } from '../../src/runner/runner';\nexport const helper = runOnce;\n",
};

/** Each named violation: the files that plant it, and the rule and import that must be reported. */
const VIOLATIONS: ReadonlyArray<{ readonly name: string; readonly files: Record<string, string>; readonly rule: string; readonly from: string; readonly to: string | RegExp }> = [
  {
    name: 'a cycle between two module folders',
    files: {
      'src/services/service.ts': "import { runOnce } from '../runner/runner';\nexport const serve = runOnce;\n",
      'src/runner/uses-services.ts': "import { serve } from '../services/service';\nexport const useService = serve;\n",
    },
    rule: 'layer-runner',
    from: 'src/runner/uses-services.ts',
    to: 'src/services/service.ts',
  },
  {
    name: 'an import back up the layers (the kernel reaching a feature)',
    files: { 'src/json/measure.ts': "import { runOnce } from '../runner/runner';\nexport const measure = runOnce;\n" },
    rule: 'layer-json-telemetry',
    from: 'src/json/measure.ts',
    to: 'src/runner/runner.ts',
  },
  {
    name: 'an import between two folders of one layer',
    files: { 'src/policy/policy.ts': "import { admit } from '../admission/admission-controller';\nexport const decide = admit;\n" },
    rule: 'sibling-policy',
    from: 'src/policy/policy.ts',
    to: 'src/admission/admission-controller.ts',
  },
  {
    name: 'a core file importing @nestjs',
    files: { 'src/admission/admission-queue.ts': "import { Injectable } from '@nestjs/common';\nexport const marker = Injectable;\n" },
    rule: 'core-without-nest',
    from: 'src/admission/admission-queue.ts',
    to: NEST_COMMON,
  },
  {
    name: 'a core file importing a @nestjs type only',
    files: { 'src/admission/admission-options.ts': "import type { ExecutionContext } from '@nestjs/common';\nexport type Source = (context: ExecutionContext) => string;\n" },
    rule: 'core-without-nest',
    from: 'src/admission/admission-options.ts',
    to: NEST_COMMON,
  },
  {
    name: 'src importing test',
    files: { 'src/admission/fixture.ts': "import { helper } from '../../test/support/helper';\nexport const fixture = helper;\n" },
    rule: 'src-not-test',
    from: 'src/admission/fixture.ts',
    to: 'test/support/helper.ts',
  },
];

interface Violation {
  readonly rule: { readonly name: string };
  readonly from: string;
  readonly to: string;
}

async function writeTree(root: string, files: Record<string, string>): Promise<void> {
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), text);
  }
}

/** Runs the repository's rules over `root/src` and returns the violations depcruise reports. */
async function cruise(root: string): Promise<Violation[]> {
  const args = [DEPCRUISE, 'src', '--config', path.join(ROOT, '.dependency-cruiser.js'), '--output-type', 'json'];
  const output = await run(process.execPath, args, { cwd: root, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
  return (JSON.parse(output.stdout) as { summary: { violations: Violation[] } }).summary.violations;
}

describe('the dependency rules of the house', () => {
  let work: string;

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'agent-runtime-depcruise-'));
  });

  afterAll(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  async function project(name: string, files: Record<string, string>): Promise<string> {
    const root = path.join(work, name);
    await writeTree(root, { ...CLEAN, ...files });
    await writeFile(path.join(root, 'tsconfig.json'), JSON.stringify({ compilerOptions: { experimentalDecorators: true, module: 'commonjs', strict: true }, include: ['src', 'test'] }));
    await symlink(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'), 'dir');
    return root;
  }

  it('passes a tree that follows them', async () => {
    expect(await cruise(await project('clean', {}))).toEqual([]);
  }, 60_000);

  it.each(VIOLATIONS.map((violation) => [violation.name, violation] as const))('fails %s', async (_name, violation) => {
    const root = await project(violation.name.replace(/[^a-z]+/g, '-'), violation.files);
    const reported = (await cruise(root)).map((found) => ({ rule: found.rule.name, from: found.from, to: found.to }));
    const to = typeof violation.to === 'string' ? violation.to : expect.stringMatching(violation.to);
    expect(reported).toContainEqual({ rule: violation.rule, from: violation.from, to });
  }, 60_000);
});
