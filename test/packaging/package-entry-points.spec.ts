/**
 * The published package as a consumer installs it (issue 13): `npm pack`, the tarball installed into
 * an empty project, the core entry point required with neither optional peer present, then each
 * adapter subpath required once its peer is installed. Installs prefer npm's local cache (`npm ci`
 * of this repository filled it), so the suite needs the registry only for what the cache lacks.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const INSTALL_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];
const PEERS = { ai: '7.0.173', '@google/adk': '2.0.0' };
/** Packages whose load an application feels (size, start-up time, native parts); an entry point loads one only when its module needs it. */
const HEAVY = ['typeorm', 'pg', 'pg-listen', 'piscina', 'ajv', 'class-validator', 'class-transformer', 'prom-client', '@nestjs/typeorm', '@nestjs/terminus'];
/** Entry points of optional peers, required in the tests below. */
const OPTIONAL_PEER_ENTRY_POINTS = { './ai-sdk': 'ai', './adk': '@google/adk' };
/** What each entry point loads of {@link HEAVY} when required alone in a fresh process (README, "Entry points"). */
const HEAVY_PACKAGES_LOADED: Record<string, string[]> = {
  'nest-agent-runtime': ['ajv', 'class-validator', 'piscina', 'typeorm'],
  'nest-agent-runtime/admission': [],
  'nest-agent-runtime/policy': [],
  'nest-agent-runtime/ledger': [],
  // tool argument schemas (ajv) and the DTOs of the /runs routes
  'nest-agent-runtime/runner': ['ajv', 'class-validator'],
  'nest-agent-runtime/trace': [],
  // the request preparation pool
  'nest-agent-runtime/evaluation': ['piscina'],
  'nest-agent-runtime/services': [],
  'nest-agent-runtime/cluster': [],
  // the console's snapshot reads the evaluation service
  'nest-agent-runtime/observability': ['piscina'],
  'nest-agent-runtime/health': [],
  'nest-agent-runtime/http': [],
  // the migrations are TypeORM classes
  'nest-agent-runtime/database': ['typeorm'],
  'nest-agent-runtime/testing': [],
};

/** Requires `entryPoint`, then prints which of `heavy` were loaded (run in the consumer project by its source text). */
function listHeavyLoaded(entryPoint: string, heavy: readonly string[]): void {
  require(entryPoint);
  const packages = new Set<string>();
  for (const file of Object.keys(require.cache)) {
    const segments = file.split(/node_modules[\\/]/).pop()?.split(/[\\/]/) ?? [];
    packages.add(segments[0]?.startsWith('@') ? `${segments[0]}/${segments[1]}` : (segments[0] ?? ''));
  }
  console.log(JSON.stringify([...packages].filter((name) => heavy.includes(name)).sort()));
}

/** Runs a CommonJS snippet in the consumer project and returns what it printed as JSON. */
async function inConsumer(project: string, source: string): Promise<unknown> {
  const { stdout } = await run(process.execPath, ['-e', source], { cwd: project, timeout: 60_000 });
  return JSON.parse(stdout.trim().split('\n').pop() as string);
}

describe('the packed package in a consumer project', () => {
  let work: string;
  let project: string;

  beforeAll(async () => {
    work = await mkdtemp(path.join(tmpdir(), 'agent-runtime-pack-'));
    project = path.join(work, 'consumer');
    const { stdout } = await run(NPM, ['pack', '--pack-destination', work, '--silent'], { cwd: ROOT, timeout: 120_000 });
    const tarball = path.join(work, stdout.trim().split('\n').pop() as string);
    await run('mkdir', ['-p', project]);
    await writeFile(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }));
    await run(NPM, ['install', tarball, ...INSTALL_FLAGS], { cwd: project, timeout: 300_000 });
  }, 420_000);

  afterAll(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('loads the core entry point with neither ai nor @google/adk installed, and never pulls them (or @opentelemetry/api) in', async () => {
    const seen = await inConsumer(
      project,
      `const missing = (name) => { try { require.resolve(name); return false; } catch { return true; } };
       const core = require('nest-agent-runtime');
       const loaded = Object.keys(require.cache).filter((file) => /node_modules[\\\\/](ai|@google[\\\\/]adk|@ai-sdk|@opentelemetry|puppeteer-core)[\\\\/]/.test(file));
       console.log(JSON.stringify({ aiMissing: missing('ai'), adkMissing: missing('@google/adk'), admission: typeof core.AdmissionController, policy: typeof core.RuntimePolicy, loaded }));`,
    );
    expect(seen).toEqual({ aiMissing: true, adkMissing: true, admission: 'function', policy: 'function', loaded: [] });
  });

  it('requires each entry point in a fresh process, and each loads only the heavy packages its module needs', async () => {
    const manifest = JSON.parse(await readFile(path.join(project, 'node_modules', 'nest-agent-runtime', 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
    const entryPoints = Object.keys(manifest.exports)
      .filter((subpath) => subpath !== './package.json' && !Object.hasOwn(OPTIONAL_PEER_ENTRY_POINTS, subpath))
      .map((subpath) => (subpath === '.' ? 'nest-agent-runtime' : `nest-agent-runtime/${subpath.slice(2)}`));
    expect(entryPoints.sort()).toEqual(Object.keys(HEAVY_PACKAGES_LOADED).sort());
    const loaded: Record<string, string[]> = {};
    for (const entryPoint of entryPoints) {
      loaded[entryPoint] = (await inConsumer(project, `(${listHeavyLoaded.toString()})(${JSON.stringify(entryPoint)}, ${JSON.stringify(HEAVY)});`)) as string[];
    }
    expect(loaded).toEqual(HEAVY_PACKAGES_LOADED);
  }, 120_000);

  it('refuses the ADK adapter with a typed error while its peer is missing', async () => {
    const seen = await inConsumer(
      project,
      `const adk = require('nest-agent-runtime/adk');
       let code = null;
       try { new adk.AdkSafetyPlugin({ runtimePolicy: require('nest-agent-runtime').RuntimePolicy.compile({ agents: { allow: ['a'] }, tools: { allow: ['t'] } }) }); } catch (error) { code = error.code ?? String(error); }
       console.log(JSON.stringify({ code }));`,
    );
    expect(seen).toEqual({ code: 'adk_peer_missing' });
  });

  it('loads each adapter subpath once its peer is installed', async () => {
    await run(NPM, ['install', ...Object.entries(PEERS).map(([name, version]) => `${name}@${version}`), ...INSTALL_FLAGS], { cwd: project, timeout: 600_000 });
    const seen = await inConsumer(
      project,
      `const aiSdk = require('nest-agent-runtime/ai-sdk');
       const adk = require('nest-agent-runtime/adk');
       const policy = require('nest-agent-runtime').RuntimePolicy.compile({ agents: { allow: ['a'] }, tools: { allow: ['t'] } });
       const plugin = new adk.AdkSafetyPlugin({ runtimePolicy: policy });
       console.log(JSON.stringify({ pluginName: plugin.name, guardTools: typeof aiSdk.guardTools, middleware: typeof aiSdk.runtimeSafetyMiddleware, withAdmission: typeof aiSdk.withAdmission,
         facade: typeof adk.AdkRunnerFacade, plugin: typeof adk.AdkSafetyPlugin, sessions: typeof adk.BudgetGuardSessionService, guards: typeof adk.installAgentGuards }));`,
    );
    expect(seen).toEqual({ pluginName: expect.any(String), guardTools: 'function', middleware: 'function', withAdmission: 'function', facade: 'function', plugin: 'function', sessions: 'function', guards: 'function' });
  }, 660_000);
});
