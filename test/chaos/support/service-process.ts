import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, type WriteStream } from 'node:fs';
import { join, resolve } from 'node:path';
import { findFreePort } from '../../../src/database/embedded/embedded-postgres';
import { ResponseLog } from './response-log';

const ROOT = resolve(__dirname, '..', '..', '..');
/** The built reference service (`npm run build`). */
export const MAIN = join(ROOT, 'dist', 'src', 'main.js');

/** How an instance of the reference service is started. */
export interface ServiceSettings {
  /** Short label used in reports (`a`, `b`). */
  readonly label: string;
  readonly databaseUrl: string;
  /** Cluster mode (`CLUSTER=1`) with this `INSTANCE_ID`; one process alone when absent. */
  readonly instanceId?: string;
  /** Where its stdout and stderr go. */
  readonly logFile: string;
}

/** The exit of a service process the suite did not ask for. */
export interface UnexpectedExit {
  readonly atMs: number;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/**
 * One `node dist/src/main.js` process of the reference service on a free port, its output in a log
 * file. An exit before {@link stop} is remembered: the suite asserts that no instance restarts.
 */
export class ServiceProcess {
  /** Set when the process exited before `stop` was called. */
  unexpectedExit: UnexpectedExit | undefined;
  private stopping = false;
  private readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private constructor(
    readonly label: string,
    readonly baseUrl: string,
    private readonly child: ChildProcess,
    private readonly log: WriteStream,
  ) {
    this.exited = new Promise((resolveExit) => {
      child.once('exit', (code, signal) => {
        if (!this.stopping) this.unexpectedExit = { atMs: Date.now(), code, signal };
        resolveExit({ code, signal });
      });
    });
  }

  /** Starts the service and resolves once `/health/ready` answers 200 (within `readyTimeoutMs`). */
  static async start(settings: ServiceSettings, readyTimeoutMs = 90_000): Promise<ServiceProcess> {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first (npm run test:chaos does)`);
    const port = await findFreePort();
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: settings.databaseUrl, PORT: String(port), NO_COLOR: '1' };
    delete env.CLUSTER;
    delete env.INSTANCE_ID;
    delete env.REFERENCE_USERS;
    if (settings.instanceId !== undefined) Object.assign(env, { CLUSTER: '1', INSTANCE_ID: settings.instanceId });
    const log = createWriteStream(settings.logFile);
    const child = spawn(process.execPath, [MAIN], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    const service = new ServiceProcess(settings.label, `http://127.0.0.1:${port}`, child, log);
    await service.waitReady(readyTimeoutMs, settings.logFile);
    return service;
  }

  get pid(): number {
    return this.child.pid as number;
  }

  /** True while the process runs. */
  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves the exit. */
  async stop(graceMs = 35_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    this.stopping = true;
    if (this.alive) {
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
      await this.exited.finally(() => clearTimeout(timer));
    }
    const exit = await this.exited;
    await new Promise((resolveClose) => this.log.end(resolveClose));
    return exit;
  }

  private async waitReady(timeoutMs: number, logFile: string): Promise<void> {
    const probe = new ResponseLog(2000);
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.alive) throw new Error(`reference service ${this.label} exited during start-up (${JSON.stringify(this.unexpectedExit)}); see ${logFile}`);
      if ((await probe.send(this, 'GET /health/ready', '/health/ready', { record: false })).status === 200) return;
      await new Promise((resolveWait) => setTimeout(resolveWait, 250));
    }
    await this.stop(1000);
    throw new Error(`reference service ${this.label} was not ready within ${timeoutMs} ms of its start; see ${logFile}`);
  }
}
