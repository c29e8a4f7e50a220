/**
 * One consumer app, step by step: a fresh folder, the README's install command, `tsc`, the
 * package's bin for migrations, then the compiled app started with `node` and checked over HTTP,
 * and stopped with SIGTERM. Each step prints one line, `consumer(<id>): step <name> ok|FAIL|skipped`;
 * a failure prints the tail of the log that explains it. A failed blocking step skips the steps
 * after it; a non-blocking one (a check that needs nothing later) lets them run.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEV_TOOLS, installArguments, packageJson, tsconfigJson } from './apps.mjs';
import { countRows, publicTables } from './database.mjs';
import { followEvents, request, shown, waitForListening } from './http.mjs';
import { freePort, run, startServer, tail } from './processes.mjs';

const TEMPLATE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'app');
const NPM_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund'];
const AUDIT_TABLE = 'agent_runtime_policy_audit_log';
/** Tables an app that installs only the audit-log group may have: the migrations table and the audit log's own. */
const AUDIT_LOG_TABLES = /^agent_runtime_(migrations|policy_audit_[a-z_]+)$/;
/** Packages the app installs itself; the package must use these copies, never bring its own. */
const SHARED_PACKAGES = ['typeorm', 'pg', '@nestjs/common', '@nestjs/core', '@nestjs/typeorm', '@nestjs/terminus', '@nestjs/event-emitter', 'reflect-metadata', 'rxjs'];
const RUNNER_METRIC = /^agent_runtime_runner_invocations_total\{[^}]*agent_id="helper"[^}]*status="completed"[^}]*\} 1$/m;

/** A step's failure: what went wrong, and the log tail that shows why. */
class StepFailure extends Error {
  constructor(message, logTail = '') {
    super(message);
    this.logTail = logTail;
  }
}

const fail = (message, logTail) => {
  throw new StepFailure(message, logTail);
};

/** The installed version of `name` in `dir`'s node_modules, or null. */
function installedVersion(dir, name) {
  const file = path.join(dir, 'node_modules', name, 'package.json');
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).version : null;
}

/** npm's warnings in an install log, one line each (an engine warning names its package and range), at most 10. */
function npmWarnings(logFile) {
  const text = readFileSync(logFile, 'utf8');
  const engines = [...text.matchAll(/package: '([^']+)',\s*npm warn EBADENGINE\s+required: \{ node: '([^']+)'/g)].map(([, name, range]) => `EBADENGINE ${name} needs node ${range}`);
  const others = text.split('\n').filter((line) => /^npm warn (?!EBADENGINE)\S/.test(line)).map((line) => line.slice('npm warn '.length));
  return [...new Set([...engines, ...others])].slice(0, 10);
}

/** The `error TS…` lines of a compiler log (at most 30), and how many there were. */
function compilerErrors(logFile) {
  const lines = readFileSync(logFile, 'utf8').split('\n').filter((line) => /error TS\d+/.test(line));
  return `${lines.slice(0, 30).join('\n')}${lines.length > 30 ? `\n… ${lines.length - 30} more` : ''}`;
}

/**
 * Runs every step of `app` and resolves with the results `{ step, status, seconds }`.
 * `context`: `{ tarball, packages, databaseUrl, print(line), keep, onServer(server) }`.
 */
export async function runApp(app, context) {
  const label = `consumer(${app.id})`;
  const dir = mkdtempSync(path.join(tmpdir(), `consumer-${app.id}-`));
  const logs = { install: path.join(dir, 'install.log'), compile: path.join(dir, 'compile.log'), bin: path.join(dir, 'bin.log'), server: path.join(dir, 'server.log') };
  const env = { ...process.env, DATABASE_URL: context.databaseUrl, NO_COLOR: '1' };
  delete env.NODE_OPTIONS;
  const results = [];
  let blocked = null;
  let server = null;
  let base = '';

  const step = async (name, body, { blocking = true } = {}) => {
    if (blocked) {
      results.push({ step: name, status: 'skipped', seconds: 0 });
      context.print(`${label}: step ${name} skipped (after ${blocked} failed)`);
      return;
    }
    const started = Date.now();
    try {
      const detail = await body();
      const seconds = (Date.now() - started) / 1000;
      results.push({ step: name, status: 'ok', seconds });
      context.print(`${label}: step ${name} ok (${seconds.toFixed(1)}s)${detail ? ` ${detail}` : ''}`);
    } catch (error) {
      const seconds = (Date.now() - started) / 1000;
      results.push({ step: name, status: 'FAIL', seconds });
      const message = error instanceof Error ? error.message : String(error);
      const logTail = error instanceof StepFailure ? error.logTail : error instanceof Error ? (error.stack ?? '') : '';
      const block = logTail ? `\n${logTail.split('\n').map((line) => `${label}:   | ${line}`).join('\n')}` : '';
      context.print(`${label}: step ${name} FAIL (${seconds.toFixed(1)}s): ${message}${block}`);
      if (blocking) blocked = name;
    }
  };
  const serverTail = () => tail(logs.server, 40);
  const bin = async (args) => {
    const code = await run('npx', ['--no', '--', 'nest-agent-runtime', ...args], { cwd: dir, env, logFile: logs.bin, timeoutMs: 120_000 });
    if (code !== 0) fail(`npx nest-agent-runtime ${args.join(' ')} exited ${code}`, tail(logs.bin, 20));
  };

  context.print(`${label}: ${app.title} in ${dir}`);
  await step('install', async () => {
    writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify(packageJson(app), null, 2)}\n`);
    writeFileSync(path.join(dir, 'tsconfig.json'), `${JSON.stringify(tsconfigJson(), null, 2)}\n`);
    cpSync(path.join(TEMPLATE, 'src'), path.join(dir, 'src'), { recursive: true });
    const readme = installArguments(app, context.packages, context.tarball);
    if ((await run('npm', ['install', ...readme, ...NPM_FLAGS], { cwd: dir, env, logFile: logs.install })) !== 0) fail('npm install (the README command) failed', tail(logs.install));
    if ((await run('npm', ['install', '-D', ...DEV_TOOLS, ...NPM_FLAGS], { cwd: dir, env, logFile: logs.install })) !== 0) fail('npm install -D (dev tools) failed', tail(logs.install));
    for (const warning of npmWarnings(logs.install)) context.print(`${label}:   npm warned: ${warning}`);
    const shownNames = ['@nestjs/core', '@nestjs/terminus', '@nestjs/event-emitter', '@nestjs/typeorm', 'typeorm', 'pg', 'typescript'];
    return shownNames.map((name) => `${name}@${installedVersion(dir, name) ?? 'missing'}`).join(' ');
  });

  await step(
    'peers',
    async () => {
      const own = path.join(dir, 'node_modules', 'nest-agent-runtime');
      const copies = SHARED_PACKAGES.map((name) => [name, installedVersion(own, name)]).filter(([, version]) => version !== null);
      if (copies.length > 0) fail(`the package brings its own ${copies.map(([name, version]) => `${name}@${version} (the app has ${installedVersion(dir, name)})`).join(', ')}`);
      const wrong = Object.entries(app.ranges).filter(([name, range]) => !(installedVersion(dir, name) ?? '').startsWith(range.replace('^', '')));
      if (wrong.length > 0) fail(`resolved outside the app's line: ${wrong.map(([name, range]) => `${name}@${installedVersion(dir, name)} (want ${range})`).join(', ')}`);
      return '(one copy of each peer)';
    },
    { blocking: false },
  );

  await step('compile', async () => {
    const code = await run(path.join(dir, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], { cwd: dir, env, logFile: logs.compile });
    if (code !== 0) fail(`tsc (strict, skipLibCheck false) exited ${code}`, compilerErrors(logs.compile) || tail(logs.compile));
    if (!existsSync(path.join(dir, 'dist', 'main.js'))) fail('tsc produced no dist/main.js');
  });

  await step('migrate', async () => {
    await bin(['migrate', '--modules', 'audit-log']);
    const tables = await publicTables(context.databaseUrl);
    if (!tables.includes(AUDIT_TABLE)) fail(`no ${AUDIT_TABLE} after the migration (tables: ${tables.join(', ') || 'none'})`);
    const extra = tables.filter((table) => !AUDIT_LOG_TABLES.test(table));
    if (extra.length > 0) fail(`tables of other modules were created: ${extra.join(', ')}`);
    return `(tables: ${tables.join(', ')})`;
  });

  await step('start', async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    server = startServer('dist/main.js', { cwd: dir, env: { ...env, PORT: String(port) }, logFile: logs.server });
    context.onServer(server);
    if (!(await waitForListening(base, '/health/ready', () => server.running, 60_000))) {
      const exit = server.running ? 'did not listen within 60 s' : `exited (${JSON.stringify(await server.exited)}) before it listened`;
      fail(`node dist/main.js ${exit}`, serverTail());
    }
    return `(${base})`;
  });

  await step('ready', async () => {
    let response;
    for (let attempt = 0; attempt < 10; attempt++) {
      response = await request(base, 'GET', '/health/ready');
      if (response.status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    if (response.status !== 200 || response.json?.status !== 'ok') fail(`GET /health/ready -> ${shown(response)}`, serverTail());
    return `(${Object.keys(response.json.info ?? {}).join(', ')})`;
  }, { blocking: false });

  await step('admission', async () => {
    const response = await request(base, 'POST', '/agents/support/invoke', {});
    if (response.status !== 200 || response.json?.admitted !== true) fail(`POST /agents/support/invoke -> ${shown(response)}`, serverTail());
  }, { blocking: false });

  await step('policy-deny', async () => {
    const before = await countRows(context.databaseUrl, AUDIT_TABLE);
    const allowed = await request(base, 'POST', '/tools/search', { query: 'runbook' });
    if (allowed.status !== 200) fail(`POST /tools/search (allowed) -> ${shown(allowed)}`, serverTail());
    const denied = await request(base, 'POST', '/tools/shell', { command: 'ls' });
    if (denied.status !== 403 || denied.json?.code !== 'runtime_policy_denied') fail(`POST /tools/shell -> ${shown(denied)} (want 403 runtime_policy_denied)`, serverTail());
    const after = await countRows(context.databaseUrl, AUDIT_TABLE);
    if (after !== before + 1) fail(`${AUDIT_TABLE} has ${after} rows after the denial, ${before} before (want one more)`, serverTail());
    return `(403, audit rows ${before} -> ${after})`;
  }, { blocking: false });

  await step('verify-audit', () => bin(['verify-audit']), { blocking: false });

  await step('run-sse', async () => {
    const started = await request(base, 'POST', '/runs', { agent: 'helper', message: 'Where is the runbook?' });
    if (started.status !== 202 || typeof started.json?.run_id !== 'string') fail(`POST /runs -> ${shown(started)}`, serverTail());
    const followed = await followEvents(base, `/runs/${encodeURIComponent(started.json.run_id)}/events`);
    if (followed.status !== 200 || !followed.contentType.startsWith('text/event-stream')) fail(`GET /runs/:id/events -> ${followed.status} ${followed.contentType}`, serverTail());
    const terminal = followed.items.find((item) => item.event === 'terminal');
    const kinds = followed.items.map((item) => item.data?.event?.kind ?? item.event);
    if (terminal?.data?.status !== 'completed') fail(`the run ended without a completed terminal item (${followed.error ?? ''} items: ${kinds.join(', ')}; terminal: ${JSON.stringify(terminal?.data ?? null)})`, serverTail());
    for (const kind of ['tool_response', 'final_output']) if (!kinds.includes(kind)) fail(`no ${kind} event in the run (items: ${kinds.join(', ')})`);
    return `(${followed.items.length} items: ${kinds.join(', ')})`;
  }, { blocking: false });

  await step('metrics', async () => {
    let response;
    for (let attempt = 0; attempt < 10; attempt++) {
      response = await request(base, 'GET', '/metrics');
      if (response.status === 200 && RUNNER_METRIC.test(response.text)) return '(agent_runtime_runner_invocations_total helper completed 1)';
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    const runnerLines = response.text.split('\n').filter((line) => line.startsWith('agent_runtime_runner_invocations_total') || line.startsWith('agent_runtime_runs_')).join('\n');
    fail(`GET /metrics -> ${response.status}, no completed runner invocation of helper`, runnerLines || response.text.slice(0, 400));
  }, { blocking: false });

  await step('sigterm', async () => {
    const exit = await server.stop(30_000);
    if (exit.timedOut) fail('the app did not exit within 30 s of SIGTERM', serverTail());
    if (exit.code !== 0) fail(`the app exited ${exit.code ?? exit.signal} after SIGTERM (want 0)`, serverTail());
    return '(exit 0)';
  });

  if (server?.running) await server.stop(5_000);
  // what the app printed that a team would notice in its logs (reported, not failed on)
  const noticed = existsSync(logs.server) ? tail(logs.server, 10_000).split('\n').filter((line) => /Warning|\bWARN\b|\bERROR\b/.test(line) || /deprecat/i.test(line)) : [];
  for (const line of noticed.slice(0, 10)) context.print(`${label}:   the app printed: ${line.slice(0, 300)}`);
  return { results, dir };
}
