import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import * as path from 'node:path';
import { runAgentRuntimeMigrations } from '../src/database/data-source.factory';
import { startThrowawayPostgres, type DatabaseHandle } from '../src/database/embedded/embedded-postgres';

declare global {
  // eslint-disable-next-line no-var
  var __agentRuntimeTestDatabase: DatabaseHandle | undefined;
}

/**
 * Compiles the package once (`tsc -p tsconfig.build.json`) so that code the suites cannot load
 * through ts-jest exists as JavaScript: worker threads (the eval request preparation pool) run plain
 * Node. The old `dist` goes first, so the packed file list holds no file of a deleted source. Fails
 * the run on a compiler error.
 */
function buildPackage(): void {
  const root = path.resolve(__dirname, '..');
  rmSync(path.join(root, 'dist'), { recursive: true, force: true });
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const build = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) throw new Error(`tsc -p tsconfig.build.json failed (${build.error ? build.error.message : `exit ${build.status ?? build.signal}`})`);
}

/**
 * Gives every test worker a migrated, real Postgres at `process.env.DATABASE_URL`: the server the
 * caller named in `DATABASE_URL`, or a throw-away embedded one.
 */
export default async function globalSetup(): Promise<void> {
  buildPackage();
  if (!process.env.DATABASE_URL) {
    const database = await startThrowawayPostgres();
    globalThis.__agentRuntimeTestDatabase = database;
    process.env.DATABASE_URL = database.url;
  }
  await runAgentRuntimeMigrations(process.env.DATABASE_URL);
}
