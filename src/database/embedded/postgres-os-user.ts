import { execFile } from 'node:child_process';
import { constants as fsConstants, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { EmbeddedPostgresError } from '../embedded-postgres.errors';

/** The OS account the Postgres binaries run as. */
export interface OsUser {
  readonly uid: number;
  readonly gid: number;
}

const NAME = 'postgres';

/**
 * Postgres refuses to run as root, so a root process runs it as the `postgres` OS user, created
 * when absent. Resolves `undefined` when this process is not root (the binaries run as itself).
 */
export async function postgresOsUser(): Promise<OsUser | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const existing = await lookUp();
  if (existing) return existing;
  // exit code 9: the group or user exists (created meanwhile by a concurrent start)
  await run('groupadd', ['--system', NAME], [9]);
  await run('useradd', ['--system', '--gid', NAME, '--no-create-home', NAME], [9]);
  const created = await lookUp();
  if (!created) throw new EmbeddedPostgresError('os_user_failed', { user: NAME });
  return created;
}

/**
 * The first directory on the way to `target` (itself included) that `user` cannot enter, judged
 * by owner, group and other execute bits (supplementary groups are not counted, so a doubtful
 * directory counts as closed); `undefined` when every one is open.
 */
export function firstClosedDirectory(target: string, user: OsUser): string | undefined {
  for (let current = resolve(target); ; current = dirname(current)) {
    const { mode, uid, gid } = statSync(current);
    const bit = uid === user.uid ? fsConstants.S_IXUSR : gid === user.gid ? fsConstants.S_IXGRP : fsConstants.S_IXOTH;
    if ((mode & bit) === 0) return current;
    if (dirname(current) === current) return undefined;
  }
}

async function lookUp(): Promise<OsUser | undefined> {
  try {
    const [uid, gid] = await Promise.all([output('id', ['-u', NAME]), output('id', ['-g', NAME])]);
    return { uid: Number.parseInt(uid, 10), gid: Number.parseInt(gid, 10) };
  } catch {
    return undefined;
  }
}

function output(file: string, args: string[]): Promise<string> {
  return new Promise((resolveOutput, reject) => {
    execFile(file, args, { encoding: 'utf8' }, (error, stdout) => (error ? reject(error) : resolveOutput(stdout.trim())));
  });
}

async function run(file: string, args: string[], acceptedExitCodes: number[]): Promise<void> {
  try {
    await output(file, args);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'number' && acceptedExitCodes.includes(code)) return;
    throw new EmbeddedPostgresError('os_user_failed', { user: NAME, command: file, errno: typeof code === 'string' ? code : null, exit_code: typeof code === 'number' ? code : null });
  }
}
