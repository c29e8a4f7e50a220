import { existsSync, promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedPostgresError } from '../embedded-postgres.errors';
import type { PostgresBinaries } from './postgres-binaries';
import { firstClosedDirectory, type OsUser } from './postgres-os-user';

const NATIVE_PARTS = ['bin', 'lib', 'share'];

/** Root of the binary cache and of relocated data directories: `<os tmpdir>/agent-runtime-embedded-postgres`. */
export function defaultCacheRoot(): string {
  return join(tmpdir(), 'agent-runtime-embedded-postgres');
}

/**
 * The `native` directory to run the binaries from: the package's own when `user` can enter it (or
 * when there is no separate user), else a copy in the per-version cache under `cacheRoot`. The copy
 * is made once, in a staging directory renamed into place, so concurrent starts never run a
 * half-copied tree: the one that loses the rename uses the winner's copy.
 */
export async function runnableNativeDir(binaries: PostgresBinaries, user: OsUser | undefined, cacheRoot: string): Promise<string> {
  if (!user || NATIVE_PARTS.every((part) => firstClosedDirectory(join(binaries.nativeDir, part), user) === undefined)) return binaries.nativeDir;
  await prepareCacheRoot(cacheRoot, user);
  const target = join(cacheRoot, `postgres-${binaries.version}-${binaries.platform}`);
  if (existsSync(join(target, 'bin', 'postgres'))) return target;
  let staging: string | undefined;
  try {
    staging = await fs.mkdtemp(join(cacheRoot, '.staging-'));
    const copy = join(staging, 'native');
    await fs.cp(binaries.nativeDir, copy, { recursive: true, verbatimSymlinks: true });
    await openToOthers(copy);
    await fs.rename(copy, target).catch((error: unknown) => {
      if (!existsSync(join(target, 'bin', 'postgres'))) throw error;
    });
  } catch (error) {
    throw new EmbeddedPostgresError('binary_cache_failed', { directory: cacheRoot, errno: errnoOf(error) });
  } finally {
    if (staging) await fs.rm(staging, { recursive: true, force: true });
  }
  return target;
}

/**
 * Creates `cacheRoot` (mode 0755) when absent. It lives in a shared temp dir and holds binaries
 * that are run, so it must belong to this process's user and be writable by no one else; and the
 * server's user must be able to enter it.
 */
export async function prepareCacheRoot(cacheRoot: string, user: OsUser): Promise<void> {
  try {
    await fs.mkdir(cacheRoot, { recursive: true, mode: 0o755 });
    const stat = await fs.stat(cacheRoot);
    if (stat.uid !== process.getuid?.() || (stat.mode & 0o022) !== 0) {
      throw new EmbeddedPostgresError('binary_cache_failed', { directory: cacheRoot, errno: null, reason: 'not_owned_or_shared_writable' });
    }
    if ((stat.mode & 0o755) !== 0o755) await fs.chmod(cacheRoot, 0o755);
  } catch (error) {
    if (EmbeddedPostgresError.isEmbeddedPostgresError(error)) throw error;
    throw new EmbeddedPostgresError('binary_cache_failed', { directory: cacheRoot, errno: errnoOf(error) });
  }
  const closed = firstClosedDirectory(cacheRoot, user);
  if (closed !== undefined) throw new EmbeddedPostgresError('directory_unreachable', { directory: closed });
}

/** Directories 0755, files readable by all (executables stay executable); symlinks are left alone. */
async function openToOthers(dir: string): Promise<void> {
  await fs.chmod(dir, 0o755);
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await openToOthers(path);
    else if (entry.isFile()) {
      const { mode } = await fs.stat(path);
      await fs.chmod(path, (mode & 0o111) !== 0 ? 0o755 : 0o644);
    }
  }
}

export function errnoOf(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : null;
}
