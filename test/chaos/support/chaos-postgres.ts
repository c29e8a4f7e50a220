import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAgentRuntimeMigrations } from '../../../src/database/data-source.factory';
import { embeddedUrl, findFreePort, startEmbeddedPostgres, type DatabaseHandle } from '../../../src/database/embedded/embedded-postgres';

/** When a blink stopped the server and when it accepted connections again (wall-clock ms). */
export interface BlinkTimes {
  /** The fast shutdown was asked for. */
  readonly stopRequestedAtMs: number;
  /** The postmaster had exited. */
  readonly stoppedAtMs: number;
  /** The restarted server logged that it accepts connections. */
  readonly acceptingAtMs: number;
}

/**
 * A throw-away embedded Postgres of the chaos suite's own (fsync off), migrated, that can be
 * stopped with a fast shutdown (SIGINT to the postmaster) and started again on the same port and
 * data directory: a database blink as an operator sees one.
 */
export class ChaosPostgres {
  private handle: DatabaseHandle | undefined;

  private constructor(
    private readonly baseDir: string,
    private readonly port: number,
  ) {}

  /** Starts a fresh server on a free port and runs the package's migrations on it. */
  static async start(): Promise<ChaosPostgres> {
    const baseDir = await fs.mkdtemp(join(tmpdir(), 'agent-runtime-chaos-pg-'));
    // mkdtemp is private to its creator; run as root, the server's `postgres` OS user must traverse it
    await fs.chmod(baseDir, 0o755);
    const server = new ChaosPostgres(baseDir, await findFreePort());
    await server.startServer();
    await runAgentRuntimeMigrations(server.url);
    return server;
  }

  /** The connection URL (the same across blinks). */
  get url(): string {
    return embeddedUrl(this.port);
  }

  /** Stops the server (fast shutdown), keeps it down `downMs` after its exit, starts it again on the same port and data. */
  async blink(downMs: number): Promise<BlinkTimes> {
    const stopRequestedAtMs = Date.now();
    await this.stopServer();
    const stoppedAtMs = Date.now();
    await new Promise((resolve) => setTimeout(resolve, downMs));
    await this.startServer();
    return { stopRequestedAtMs, stoppedAtMs, acceptingAtMs: Date.now() };
  }

  /** Stops the server and deletes its data. */
  async destroy(): Promise<void> {
    await this.stopServer().catch(() => undefined);
    await fs.rm(this.baseDir, { recursive: true, force: true });
  }

  private async startServer(): Promise<void> {
    this.handle = await startEmbeddedPostgres({
      dataDir: join(this.baseDir, 'data'),
      port: this.port,
      postgresFlags: ['-c', 'fsync=off', '-c', 'full_page_writes=off'],
    });
  }

  private async stopServer(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    // DatabaseHandle.stop of a started server is a fast shutdown (SIGINT), resolved once it exited
    await handle?.stop();
  }
}
