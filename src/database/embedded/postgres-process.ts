import { spawn, type ChildProcess } from 'node:child_process';
import { basename } from 'node:path';
import { systemClock } from '../../shared/time/clock';
import { errnoOf } from './binary-cache';
import { EmbeddedPostgresError } from '../embedded-postgres.errors';
import type { OsUser } from './postgres-os-user';

/** One run of a Postgres binary. */
export interface PostgresCommand {
  readonly file: string;
  readonly args: readonly string[];
  /** The OS user to run as (root runs Postgres as `postgres`); this process's user when absent. */
  readonly user?: OsUser;
  /** Receives each output line. */
  readonly onLog: (line: string) => void;
  /**
   * Runs the process in a session of its own (`setsid`), out of the terminal's process group, so a
   * Ctrl-C reaches only the Node process, which stops the server once the app has drained.
   */
  readonly ownSession?: boolean;
}

/** A running postmaster started by {@link startServerProcess}. */
export interface ServerProcess {
  /** Fast shutdown (SIGINT), resolved when the process has exited; immediate shutdown after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

// the server is started with lc_messages=C, so this line is in English
const READY = 'database system is ready to accept connections';

/** Runs `command` to completion (`initdb`); a spawn failure or a non-zero exit is an {@link EmbeddedPostgresError}. */
export function runToCompletion(command: PostgresCommand): Promise<void> {
  return new Promise((resolveRun, reject) => {
    const child = spawnChild(command, reject);
    if (!child) return;
    child.once('error', (error) => reject(spawnFailed(command, error)));
    child.once('close', (code, signal) => {
      if (code === 0) resolveRun();
      else reject(new EmbeddedPostgresError('initdb_failed', { binary: basename(command.file), exit_code: code, signal }));
    });
  });
}

/**
 * Starts the postmaster and resolves once it accepts connections. A spawn failure, an exit before
 * that line, or `timeoutMs` without it is an {@link EmbeddedPostgresError}; a process that is still
 * running after a failed start is shut down immediately. While it runs, an exit of this Node process
 * asks it to shut down too.
 */
export function startServerProcess(command: PostgresCommand, timeoutMs: number): Promise<ServerProcess> {
  return new Promise((resolveStart, reject) => {
    let ready = false;
    let child: ChildProcess | undefined;
    const fail = (error: EmbeddedPostgresError) => {
      if (ready) return;
      ready = true;
      systemClock.clearTimer(timer);
      if (child && running.has(child)) child.kill('SIGQUIT');
      reject(error);
    };
    const timer = systemClock.setTimer(() => fail(new EmbeddedPostgresError('start_timeout', { timeout_ms: timeoutMs })), timeoutMs);
    child = spawnChild(command, fail, (line) => {
      if (ready || !line.includes(READY) || !child) return;
      ready = true;
      systemClock.clearTimer(timer);
      const server = child;
      resolveStart({ stop: (graceMs) => stopChild(server, graceMs) });
    });
    if (!child) return;
    const started = child;
    track(started);
    started.on('error', (error) => {
      // a binary that could not be spawned never emits `exit`
      if (started.pid === undefined) untrack(started);
      fail(spawnFailed(command, error));
    });
    started.once('exit', (code, signal) => {
      untrack(started);
      fail(new EmbeddedPostgresError('start_failed', { exit_code: code, signal }));
    });
  });
}

const running = new Set<ChildProcess>();

function track(child: ChildProcess): void {
  running.add(child);
  if (running.size === 1) process.on('exit', shutDownRunning);
}

function untrack(child: ChildProcess): void {
  if (running.delete(child) && running.size === 0) process.removeListener('exit', shutDownRunning);
}

function shutDownRunning(): void {
  for (const child of running) child.kill('SIGINT');
}

function stopChild(child: ChildProcess, graceMs = 30_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolveStop) => {
    const timer = systemClock.setTimer(() => child.kill('SIGQUIT'), graceMs);
    child.once('exit', () => {
      systemClock.clearTimer(timer);
      resolveStop();
    });
    child.kill('SIGINT');
  });
}

/** Spawns with listeners on every stream, so no `error` event is ever unhandled. */
function spawnChild(command: PostgresCommand, reject: (error: EmbeddedPostgresError) => void, onLine?: (line: string) => void): ChildProcess | undefined {
  let child: ChildProcess;
  try {
    child = spawn(command.file, [...command.args], {
      ...(command.user ? { uid: command.user.uid, gid: command.user.gid } : {}),
      env: { ...process.env, LC_MESSAGES: 'C' },
      detached: command.ownSession === true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    reject(spawnFailed(command, error));
    return undefined;
  }
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    stream.on('error', () => {});
    let pending = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const lines = (pending + chunk).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        command.onLog(line);
        onLine?.(line);
      }
    });
  }
  return child;
}

function spawnFailed(command: PostgresCommand, error: unknown): EmbeddedPostgresError {
  return new EmbeddedPostgresError('spawn_failed', { binary: basename(command.file), errno: errnoOf(error) });
}
