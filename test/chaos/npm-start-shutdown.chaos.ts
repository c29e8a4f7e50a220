import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { Client } from 'pg';
import { embeddedUrl, findFreePort } from '../../src/database/embedded/embedded-postgres';

/**
 * The README's start command, stopped as a terminal or a container stops it. `npm start` runs in a
 * process group of its own, as a shell's foreground job does; Ctrl-C is SIGINT to that whole group,
 * and a container runtime sends SIGTERM to the `npm start` process alone. Either way two admitted
 * 3 s calls answer 200 before the embedded Postgres stops, npm exits with the app's status 0, and no
 * process of the tree is left.
 */

const REPO_ROOT = path.resolve(__dirname, '..', '..');
const WORK_MS = 3000;

interface Answer {
  readonly status: number;
  readonly atMs: number;
}

interface StartedService {
  readonly npm: ChildProcess;
  readonly exit: Promise<number | null>;
  readonly port: number;
  readonly databaseUrl: string;
  readonly log: () => string;
}

async function startService(): Promise<StartedService> {
  const [port, databasePort] = [await findFreePort(), await findFreePort()];
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), EMBEDDED_PG_PORT: String(databasePort), NO_COLOR: '1' };
  delete env.DATABASE_URL;
  let output = '';
  const npm = spawn('npm', ['start'], { cwd: REPO_ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  for (const stream of [npm.stdout, npm.stderr]) stream?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exit = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
  const service = { npm, exit, port, databaseUrl: embeddedUrl(databasePort), log: () => output };
  const deadline = Date.now() + 240_000;
  while (Date.now() < deadline) {
    if (npm.exitCode !== null) throw new Error(`npm start exited ${npm.exitCode} before it was ready:\n${output}`);
    if ((await fetch(`http://127.0.0.1:${port}/health/ready`).catch(() => null))?.status === 200) return service;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`npm start never answered 200 on /health/ready:\n${output}`);
}

/** Every process below `root` (npm, the shell it may run, node and the postmaster with its backends). */
function descendants(root: number): number[] {
  const table = spawnSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' }).stdout;
  const children = new Map<number, number[]>();
  for (const line of table.split('\n')) {
    const [pid, ppid] = line.trim().split(/\s+/).map(Number);
    if (!pid || ppid === undefined) continue;
    children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  }
  const found: number[] = [];
  const walk = (pid: number) => {
    for (const child of children.get(pid) ?? []) {
      found.push(child);
      walk(child);
    }
  };
  walk(root);
  return found;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function invoke(port: number): Promise<Answer> {
  const response = await fetch(`http://127.0.0.1:${port}/agents/a/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ work_ms: WORK_MS }),
  });
  await response.arrayBuffer();
  return { status: response.status, atMs: Date.now() };
}

/** Resolves with the time Postgres first refused a connection after `since`. */
async function databaseDown(url: string): Promise<number> {
  for (;;) {
    const client = new Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('SELECT 1');
    } catch {
      return Date.now();
    } finally {
      await client.end().catch(() => {});
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function activePermits(port: number): Promise<number> {
  const status = (await (await fetch(`http://127.0.0.1:${port}/admission/status`)).json()) as { active: number };
  return status.active;
}

describe.each([
  ['Ctrl-C (SIGINT to the process group)', (npm: ChildProcess) => process.kill(-npm.pid!, 'SIGINT')],
  ['SIGTERM to the npm start process', (npm: ChildProcess) => process.kill(npm.pid!, 'SIGTERM')],
])('npm start stopped by %s', (_name, stop) => {
  let service: StartedService | undefined;

  afterEach(async () => {
    if (service && service.npm.exitCode === null) {
      for (const pid of [service.npm.pid!, ...descendants(service.npm.pid!)]) if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
    service = undefined;
  });

  it('drains two admitted calls to 200, then stops Postgres; npm exits 0 and leaves no process', async () => {
    service = await startService();
    const tree = descendants(service.npm.pid!);
    const calls = [invoke(service.port), invoke(service.port)];
    const admittedBy = Date.now() + 2000;
    while ((await activePermits(service.port)) < 2 && Date.now() < admittedBy) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await activePermits(service.port)).toBe(2);

    const down = databaseDown(service.databaseUrl);
    stop(service.npm);
    const answers = await Promise.all(calls);
    const [code, downAtMs] = await Promise.all([service.exit, down]);

    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    expect(Math.max(...answers.map((answer) => answer.atMs))).toBeLessThanOrEqual(downAtMs);
    expect(code).toBe(0);
    const settledBy = Date.now() + 5000;
    while (tree.some(alive) && Date.now() < settledBy) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(tree.filter(alive)).toEqual([]);
    expect(service.log()).toContain('admission drained (active 0)');
  }, 300_000);
});
