#!/usr/bin/env node
/**
 * `npm run test:docs`: every ```ts block of README.md and docs/*.md, type-checked against the packed package.
 *
 * 1. `npm run build`, then `npm pack` into a temp folder (what a user installs, nothing more).
 * 2. A temp project whose node_modules holds the unpacked tarball as `nest-agent-runtime` and symlinks to
 *    the packages this repository installed: the package's dependencies and peers, the packages of the
 *    README's install command, and a few the examples use (`@types/node`, `express`, `zod`, …).
 * 3. Each block is a module file of its own (an ES module, `module: node16`), checked in one program with
 *    `strict: true` and `skipLibCheck: false`, so the package's declarations are checked too.
 *
 * A block preceded by `<!-- partial: reason -->` is skipped and listed. Output: one line per block,
 * `ok|FAIL|skip file:line`, the compiler's messages under a failure; exit 1 on any failure.
 * Flags: `--skip-build` (use the existing dist/), `--keep` (keep and print the temp folder).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync, existsSync, renameSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(join(ROOT, 'package.json'));
const { docBlocks } = require('./scripts/docs/doc-blocks.cjs');
const ts = require('typescript');

/** Packages the examples may import beyond the package's dependencies, peers and the README's install command. */
const EXAMPLE_PACKAGES = ['@types/node', '@types/express', 'express', 'zod', '@opentelemetry/api', '@opentelemetry/sdk-trace-base', '@google/adk', 'ai'];

const flags = new Set(process.argv.slice(2));

function run(command, args, cwd = ROOT) {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.status !== 0) {
    process.stderr.write(`${command} ${args.join(' ')} failed (exit ${result.status})\n${result.stdout}${result.stderr}`);
    process.exit(2);
  }
  return result.stdout;
}

/** The package names of the README's `npm install nest-agent-runtime …` line. */
function installCommandPackages() {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const line = readme.split('\n').find((text) => /^\s*npm install nest-agent-runtime\b/.test(text));
  if (!line) return [];
  return line.trim().split(/\s+/).slice(2).filter((name) => !name.startsWith('-') && name !== 'nest-agent-runtime').map((name) => name.replace(/(.)@.*$/, '$1'));
}

/** The temp project: the tarball unpacked as node_modules/nest-agent-runtime, the rest symlinked. */
function buildProject(work) {
  const packed = JSON.parse(run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work]));
  const tarball = join(work, packed[0].filename);
  const project = join(work, 'app');
  const modules = join(project, 'node_modules');
  mkdirSync(modules, { recursive: true });
  run('tar', ['-xzf', tarball, '-C', work]);
  renameSync(join(work, 'package'), join(modules, 'nest-agent-runtime'));
  const manifest = JSON.parse(readFileSync(join(modules, 'nest-agent-runtime', 'package.json'), 'utf8'));
  const installed = realpathSync(join(ROOT, 'node_modules'));
  const names = new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {}), ...installCommandPackages(), ...EXAMPLE_PACKAGES]);
  const missing = [];
  for (const name of [...names].sort()) {
    if (name === 'nest-agent-runtime') continue;
    const source = join(installed, name);
    if (!existsSync(source)) {
      missing.push(name);
      continue;
    }
    mkdirSync(dirname(join(modules, name)), { recursive: true });
    symlinkSync(source, join(modules, name), 'dir');
  }
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'docs-check', private: true, type: 'module' }, null, 2));
  return { project, tarball: packed[0].filename, files: packed[0].entryCount, missing };
}

const COMPILER_OPTIONS = {
  strict: true,
  skipLibCheck: false,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2022.d.ts', 'lib.esnext.disposable.d.ts'],
  module: ts.ModuleKind.Node16,
  moduleResolution: ts.ModuleResolutionKind.Node16,
  moduleDetection: ts.ModuleDetectionKind.Force,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  esModuleInterop: true,
  forceConsistentCasingInFileNames: true,
  types: ['node'],
};

function main() {
  const blocks = docBlocks(ROOT, ['ts', 'typescript']);
  if (!flags.has('--skip-build')) run('npm', ['run', 'build', '--silent']);
  const work = mkdtempSync(join(tmpdir(), 'docs-check-'));
  try {
    const { project, tarball, files, missing } = buildProject(work);
    console.log(`packed ${tarball} (${files} files) into ${flags.has('--keep') ? project : 'a temp project'}`);
    if (missing.length) console.log(`not installed in this repository, so not linked: ${missing.join(', ')}`);
    mkdirSync(join(project, 'blocks'));
    const checked = new Map();
    for (const block of blocks) {
      if (block.markers.partial !== undefined) continue;
      const file = join(project, 'blocks', `${block.file.replace(/[^A-Za-z0-9]+/g, '_')}_L${block.line}.ts`);
      writeFileSync(file, `${block.code}\n`);
      checked.set(file, block);
    }
    const program = ts.createProgram([...checked.keys()], COMPILER_OPTIONS);
    const diagnostics = ts.getPreEmitDiagnostics(program);
    const byFile = new Map();
    const elsewhere = [];
    for (const diagnostic of diagnostics) {
      const block = diagnostic.file ? checked.get(diagnostic.file.fileName) : undefined;
      if (block) byFile.set(block, [...(byFile.get(block) ?? []), diagnostic]);
      else elsewhere.push(diagnostic);
    }
    let failures = 0;
    for (const block of blocks) {
      const where = `${block.file}:${block.line}`;
      if (block.markers.partial !== undefined) {
        console.log(`skip ${where} (partial: ${block.markers.partial})`);
        continue;
      }
      const found = byFile.get(block) ?? [];
      if (found.length) failures++;
      console.log(`${found.length ? 'FAIL' : 'ok'} ${where}`);
      for (const diagnostic of found) console.log(`    ${describe(diagnostic, block)}`);
    }
    // the package's own declarations must compile; another package's broken declarations are its own business
    const ours = elsewhere.filter((diagnostic) => !diagnostic.file || realpathSync(diagnostic.file.fileName).startsWith(join(realpathSync(project), 'node_modules', 'nest-agent-runtime')));
    if (ours.length) {
      failures++;
      console.log(`FAIL declarations of nest-agent-runtime (${ours.length} errors)`);
      for (const diagnostic of ours.slice(0, 30)) console.log(`    ${describe(diagnostic, undefined, project)}`);
    }
    const theirs = [...new Set(elsewhere.filter((diagnostic) => !ours.includes(diagnostic)).map((diagnostic) => packageOf(diagnostic.file.fileName)))];
    if (theirs.length) console.log(`note: declarations of other packages do not compile with skipLibCheck: false (not counted): ${theirs.sort().join(', ')}`);
    const skipped = blocks.filter((block) => block.markers.partial !== undefined).length;
    console.log(`${blocks.length - skipped} blocks checked, ${skipped} skipped as partial, ${failures} failed`);
    process.exitCode = failures ? 1 : 0;
  } finally {
    if (flags.has('--keep')) console.log(`kept ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
}

/** The package name of a file under some node_modules folder. */
function packageOf(fileName) {
  const match = /.*node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(fileName);
  return match ? match[1] : fileName;
}

/** `line N: message` (the line in the doc file) or `file(line): message` for a declaration file. */
function describe(diagnostic, block, project) {
  const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n      ');
  if (!diagnostic.file || diagnostic.start === undefined) return `TS${diagnostic.code}: ${message}`;
  const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
  if (block) return `line ${block.line + 1 + line}: TS${diagnostic.code}: ${message}`;
  return `${relative(project, diagnostic.file.fileName)}(${line + 1}): TS${diagnostic.code}: ${message}`;
}

main();
