import { promises as fs } from 'node:fs';
import { dirname, join } from 'node:path';
import { RuntimeServiceError } from '../runtime-service.errors';

/**
 * What one operation may still read of directory listings: every entry read counts, across all the
 * directories the operation lists. Running out is `artifact_scan_limit_exceeded`.
 */
export class ScanBudget {
  constructor(private remaining: number) {}

  /** Counts one entry read. */
  take(): void {
    this.remaining -= 1;
    if (this.remaining < 0) throw new RuntimeServiceError('artifact_scan_limit_exceeded', { limit: 'maxScanEntries' });
  }
}

/** The error code of a Node system error (`ENOENT`, …), else `undefined`. */
export function errnoOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** `fsync` of a directory, so the names created or removed in it survive a crash. */
export async function syncDirectory(path: string): Promise<void> {
  const handle = await fs.open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Creates `path` unless it exists (its parent must exist), syncing the parent when it did create it. */
export async function ensureDirectory(path: string): Promise<void> {
  try {
    await fs.mkdir(path);
  } catch (error) {
    if (errnoOf(error) === 'EEXIST') return;
    throw error;
  }
  await syncDirectory(dirname(path));
}

/** Writes `data` to a new file at `path` (failing when the name exists) and syncs it before closing. */
export async function writeNewFile(path: string, data: Uint8Array | string): Promise<void> {
  const handle = await fs.open(path, 'wx');
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * The bytes of the file at `path` in a Uint8Array of its own size (no pooled Buffer), or
 * `undefined` when it does not exist.
 */
export async function readWholeFile(path: string): Promise<Uint8Array | undefined> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(path, 'r');
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const { size } = await handle.stat();
    const bytes = new Uint8Array(size);
    let offset = 0;
    while (offset < size) {
      const { bytesRead } = await handle.read(bytes, offset, size - offset, offset);
      if (bytesRead === 0) return bytes.subarray(0, offset).slice();
      offset += bytesRead;
    }
    return bytes;
  } finally {
    await handle.close();
  }
}

/** The UTF-8 text of the file at `path`, or `undefined` when it does not exist. */
export async function readTextFile(path: string): Promise<string | undefined> {
  try {
    return await fs.readFile(path, 'utf8');
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return undefined;
    throw error;
  }
}

/** The names in directory `path` (none when it does not exist), each counted against `budget`. */
export async function listDirectory(path: string, budget: ScanBudget): Promise<string[]> {
  let directory: import('node:fs').Dir;
  try {
    directory = await fs.opendir(path);
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return [];
    throw error;
  }
  const names: string[] = [];
  try {
    for (let entry = await directory.read(); entry !== null; entry = await directory.read()) {
      budget.take();
      names.push(entry.name);
    }
  } finally {
    await directory.close().catch(() => undefined);
  }
  return names;
}

/** Removes the name `path`; false when it was already gone. */
export async function unlinkIfPresent(path: string): Promise<boolean> {
  try {
    await fs.unlink(path);
    return true;
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return false;
    throw error;
  }
}

/** Removes the entries of directory `path` last modified before `cutoffMs` (wall-clock ms); nothing when it does not exist. */
export async function removeFilesOlderThan(path: string, cutoffMs: number): Promise<void> {
  let directory: import('node:fs').Dir;
  try {
    directory = await fs.opendir(path);
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return;
    throw error;
  }
  try {
    for (let entry = await directory.read(); entry !== null; entry = await directory.read()) {
      const file = join(path, entry.name);
      const stat = await fs.lstat(file).catch(() => null);
      if (stat !== null && stat.mtimeMs < cutoffMs) await unlinkIfPresent(file);
    }
  } finally {
    await directory.close().catch(() => undefined);
  }
}
