/**
 * `npm run test:consumer`: the package as a NestJS team gets it. Builds and packs the repository,
 * gives each app of the matrix (apps.mjs) a fresh database, then installs, compiles, migrates,
 * starts and checks every app in its own `mktemp -d` folder, the apps in parallel. One line per
 * step (`consumer(<id>): step <name> ok|FAIL|skipped`), a summary, and exit 1 when a step failed.
 *
 *   npm run test:consumer            # both apps
 *   npm run test:consumer -- b       # only app b
 *   KEEP_CONSUMER_DIRS=1 npm run test:consumer   # keep the app folders (logs, node_modules)
 *
 * Uses `DATABASE_URL` when set (a database per app is created there and dropped after), otherwise a
 * throw-away embedded Postgres started with the repository's own launcher. Needs the npm registry
 * (or npm's cache) for the apps' dependencies.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { APPS, FALLBACK_INSTALL_PACKAGES, readmeInstallPackages } from './apps.mjs';
import { runApp } from './app-steps.mjs';
import { openDatabases } from './database.mjs';
import { run, tail } from './processes.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const started = Date.now();
const keep = process.env.KEEP_CONSUMER_DIRS === '1';
const print = (line) => process.stdout.write(`${line}\n`);
const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(1)}s`;
const cleanups = [];

/** Stops the servers, closes the databases and removes the folders; safe to call twice. */
async function cleanUp() {
  while (cleanups.length > 0) await cleanups.pop()().catch(() => undefined);
}

/** Ends the run with a one-line reason. */
async function abort(message, logTail = '') {
  print(`consumer: FAIL ${message}`);
  if (logTail) print(logTail.split('\n').map((line) => `consumer:   | ${line}`).join('\n'));
  await cleanUp();
  print(`consumer: took ${seconds(started)}`);
  process.exit(1);
}

for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => void abort(`stopped by ${signal}`));

const wanted = process.argv.slice(2);
const apps = APPS.filter((app) => wanted.length === 0 || wanted.includes(app.id));
if (apps.length === 0) await abort(`no app named ${wanted.join(', ')} (apps: ${APPS.map((app) => app.id).join(', ')})`);
const packDir = mkdtempSync(path.join(tmpdir(), 'consumer-pack-'));
cleanups.push(async () => rmSync(packDir, { recursive: true, force: true }));

let since = Date.now();
const buildLog = path.join(packDir, 'build.log');
if ((await run('npm', ['run', 'build', '--silent'], { cwd: ROOT, logFile: buildLog })) !== 0) await abort('npm run build failed', tail(buildLog));
print(`consumer: step build ok (${seconds(since)})`);

since = Date.now();
let tarball;
try {
  const { stdout } = await promisify(execFile)('npm', ['pack', '--json', '--pack-destination', packDir], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
  const [packed] = JSON.parse(stdout.slice(stdout.indexOf('[')));
  tarball = path.join(packDir, packed.filename);
  print(`consumer: step pack ok (${seconds(since)}) ${packed.filename}: ${packed.entryCount} files, ${(packed.size / 1024).toFixed(0)} kB packed`);
} catch (error) {
  await abort('npm pack failed', String(error?.stderr ?? error));
}

let packages = readmeInstallPackages(path.join(ROOT, 'README.md'));
if (packages) print(`consumer: the README's install command: npm install ${packages.join(' ')}`);
else {
  packages = FALLBACK_INSTALL_PACKAGES;
  print(`consumer: the README has no 'npm install nest-agent-runtime …' line; using the issue's: npm install ${packages.join(' ')}`);
}

since = Date.now();
let databases;
try {
  databases = await openDatabases(apps.map((app) => app.id));
  cleanups.push(() => databases.close());
  print(`consumer: step database ok (${seconds(since)}) ${databases.source}, one database per app`);
} catch (error) {
  await abort(`database: ${error instanceof Error ? error.message : String(error)}`);
}

const outcomes = await Promise.all(
  apps.map((app) =>
    runApp(app, {
      tarball,
      packages,
      databaseUrl: databases.urls[app.id],
      print,
      onServer: (server) => cleanups.push(() => server.stop(5_000)),
    }).then((outcome) => {
      if (!keep) cleanups.push(async () => rmSync(outcome.dir, { recursive: true, force: true }));
      else print(`consumer(${app.id}): kept ${outcome.dir}`);
      return { app, ...outcome };
    }),
  ),
);
await cleanUp();

let passed = 0;
let failed = 0;
for (const { app, results } of outcomes) {
  const count = (status) => results.filter((result) => result.status === status).length;
  const failures = results.filter((result) => result.status === 'FAIL').map((result) => result.step);
  const took = results.reduce((sum, result) => sum + result.seconds, 0);
  print(`consumer(${app.id}): ${count('ok')} ok, ${count('FAIL')} failed${failures.length ? ` (${failures.join(', ')})` : ''}, ${count('skipped')} skipped; ${took.toFixed(1)}s`);
  passed += count('ok');
  failed += count('FAIL') + count('skipped');
}
print(`consumer: took ${seconds(started)} for ${apps.length} app(s)`);
print(`consumer: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
