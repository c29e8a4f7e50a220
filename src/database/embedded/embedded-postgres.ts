import { createHash } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Client } from 'pg';
import { defaultCacheRoot, errnoOf, prepareCacheRoot, runnableNativeDir } from './binary-cache';
import { EmbeddedPostgresError } from '../embedded-postgres.errors';
import { findPostgresBinaries } from './postgres-binaries';
import { firstClosedDirectory, postgresOsUser, type OsUser } from './postgres-os-user';
import { runToCompletion, startServerProcess } from './postgres-process';

/** A running Postgres server the caller may use, and how to let go of it. */
export interface DatabaseHandle {
  /** `postgres://` connection URL. */
  readonly url: string;
  /** Where the server came from: the caller's `DATABASE_URL`, a server this process started, or one already running. */
  readonly source: 'env' | 'embedded-started' | 'embedded-running';
  /** The data directory of a server this process started. */
  readonly dataDir?: string;
  /** Stops the server if this process started it; otherwise does nothing. */
  stop(): Promise<void>;
}

/** Where the launcher finds and keeps the Postgres binaries. */
export interface EmbeddedPostgresLocation {
  /** The directory `embedded-postgres` is resolved from. @default this package's directory */
  resolveFrom?: string;
  /**
   * Run as root, the binaries are copied here (per version) when the `postgres` OS user cannot
   * enter the installed package, and a project's data is kept here when it cannot enter the
   * checkout. @default `<os tmpdir>/agent-runtime-embedded-postgres`
   */
  cacheRoot?: string;
}

/** Options of {@link startEmbeddedPostgres}. */
export interface EmbeddedPostgresOptions extends EmbeddedPostgresLocation {
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
  /** How long the server may take to accept connections. @default 60000 */
  startTimeoutMs?: number;
  /**
   * Start the server in a session of its own, so that a Ctrl-C in the terminal (SIGINT to the
   * foreground process group) reaches only this process, which stops the server after its app has
   * drained. An exit of this process still stops it. @default false
   */
  ownSession?: boolean;
}

/** Options of {@link openProjectDatabase}. */
export interface ProjectDatabaseOptions extends EmbeddedPostgresLocation {
  /** The checkout whose `.data/postgres` holds the data. @default process.cwd() */
  checkoutDir?: string;
  /** Receives the server's log lines. @default discard */
  onLog?: (line: string) => void;
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
 * Starts a real PostgreSQL server with the binaries of the `embedded-postgres` package (found,
 * never loaded, at this call). Run as root, the server runs as the `postgres` OS user (created when
 * absent), from a copy of the binaries in a traversable cache when that user cannot enter the
 * installed package; every parent of `dataDir` must be enterable by that user. Every failure is an
 * {@link EmbeddedPostgresError}.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<DatabaseHandle> {
  const binaries = findPostgresBinaries(options.resolveFrom);
  const user = await postgresOsUser();
  const nativeDir = await runnableNativeDir(binaries, user, options.cacheRoot ?? defaultCacheRoot());
  const dataDir = resolve(options.dataDir);
  const onLog = options.onLog ?? (() => {});
  await preparing(dataDir, () => fs.mkdir(dirname(dataDir), { recursive: true }));
  const closed = user && firstClosedDirectory(dirname(dataDir), user);
  if (closed) throw new EmbeddedPostgresError('directory_unreachable', { directory: closed });
  if (!existsSync(join(dataDir, 'PG_VERSION'))) await initialise(join(nativeDir, 'bin', 'initdb'), dataDir, user, onLog);
  const server = await startServerProcess(
    {
      file: join(nativeDir, 'bin', 'postgres'),
      args: ['-D', dataDir, '-p', String(options.port), '-c', 'lc_messages=C', ...(options.postgresFlags ?? [])],
      user,
      onLog,
      ownSession: options.ownSession === true,
    },
    options.startTimeoutMs ?? 60_000,
  );
  let stopped = false;
  return {
    url: embeddedUrl(options.port),
    source: 'embedded-started',
    dataDir,
    async stop() {
      if (stopped) return;
      stopped = true;
      await server.stop();
      if (options.removeOnStop) await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Options of {@link startThrowawayPostgres}. */
export interface ThrowawayPostgresOptions extends EmbeddedPostgresLocation {
  /** Receives the server's log lines. @default discard */
  onLog?: (line: string) => void;
}

/**
 * A throw-away embedded server in a fresh directory under the OS temp dir, on a free port; its
 * data is deleted when it stops. Used by the test global setup.
 */
export async function startThrowawayPostgres(options: ThrowawayPostgresOptions = {}): Promise<DatabaseHandle> {
  const base = await preparing(tmpdir(), async () => {
    const dir = await fs.mkdtemp(join(tmpdir(), 'agent-runtime-pg-'));
    // mkdtemp makes the directory private to its creator; the server's OS user must traverse it
    await fs.chmod(dir, 0o755);
    return dir;
  });
  try {
    // nothing of a throw-away server must survive a power cut, so it skips the disc flushes
    const handle = await startEmbeddedPostgres({
      ...options,
      dataDir: join(base, 'data'),
      port: await findFreePort(),
      removeOnStop: true,
      postgresFlags: ['-c', 'fsync=off', '-c', 'full_page_writes=off'],
    });
    return {
      ...handle,
      async stop() {
        await handle.stop();
        await fs.rm(base, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await fs.rm(base, { recursive: true, force: true });
    throw error;
  }
}

/**
 * The database of commands run by a person (`npm start`, migrations, audit verification):
 * `DATABASE_URL` when set; otherwise the project's embedded server on `EMBEDDED_PG_PORT` (default
 * 54329), reused when it is already running, else started for the length of the command. Its data
 * is in `.data/postgres` of the checkout, or, run as root from a checkout the `postgres` OS user
 * cannot enter, in a directory of the cache keyed by the checkout's path (see `dataDir`).
 */
export async function openProjectDatabase(env: NodeJS.ProcessEnv = process.env, options: ProjectDatabaseOptions = {}): Promise<DatabaseHandle> {
  if (env.DATABASE_URL) return { url: env.DATABASE_URL, source: 'env', stop: async () => {} };
  const port = env.EMBEDDED_PG_PORT ? Number(env.EMBEDDED_PG_PORT) : DEFAULT_EMBEDDED_PORT;
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new Error('EMBEDDED_PG_PORT must be a TCP port number');
  const url = embeddedUrl(port);
  if (await answers(url)) return { url, source: 'embedded-running', stop: async () => {} };
  const { checkoutDir = process.cwd(), ...launch } = options;
  // the app drains first and stops the server last, whichever process of the terminal gets the Ctrl-C
  return startEmbeddedPostgres({ ...launch, dataDir: await projectDataDir(resolve(checkoutDir), launch.cacheRoot ?? defaultCacheRoot()), port, ownSession: true });
}

/** `.data/postgres` of the checkout, or `<cacheRoot>/data-<hash of the checkout path>` when the server's user cannot reach it. */
async function projectDataDir(checkoutDir: string, cacheRoot: string): Promise<string> {
  const dataDir = join(checkoutDir, '.data', 'postgres');
  await preparing(dataDir, () => fs.mkdir(dirname(dataDir), { recursive: true }));
  const user = await postgresOsUser();
  if (!user || firstClosedDirectory(dirname(dataDir), user) === undefined) return dataDir;
  await prepareCacheRoot(cacheRoot, user);
  return join(cacheRoot, `data-${createHash('sha256').update(checkoutDir).digest('hex').slice(0, 16)}`);
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

async function initialise(initdb: string, dataDir: string, user: OsUser | undefined, onLog: (line: string) => void): Promise<void> {
  const secrets = await preparing(dataDir, async () => {
    await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
    return fs.mkdtemp(join(tmpdir(), 'agent-runtime-pg-init-'));
  });
  const passwordFile = join(secrets, 'password');
  try {
    await preparing(dataDir, async () => {
      await fs.writeFile(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
      if (user) {
        for (const path of [dataDir, secrets, passwordFile]) await fs.chown(path, user.uid, user.gid);
      }
    });
    await runToCompletion({
      file: initdb,
      args: [`--pgdata=${dataDir}`, '--auth=password', `--username=${USER}`, `--pwfile=${passwordFile}`, '--lc-messages=C'],
      user,
      onLog,
    });
  } finally {
    await fs.rm(secrets, { recursive: true, force: true });
  }
}

/** Runs a file-system step of the start, reporting its failure as `data_directory_failed`. */
async function preparing<T>(dataDir: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    throw new EmbeddedPostgresError('data_directory_failed', { directory: dataDir, errno: errnoOf(error) });
  }
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
