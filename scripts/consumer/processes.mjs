/**
 * Child processes of the consumer matrix: commands whose output goes to a log file (read back as a
 * tail when they fail), and the app's server, started with plain `node` and stopped with SIGTERM.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import net from 'node:net';

/** The last `lines` lines of a log file ('' when it cannot be read). */
export function tail(file, lines = 40) {
  try {
    return readFileSync(file, 'utf8').replace(/\x1b\[[0-9;]*m/g, '').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/**
 * Runs `command args` in `cwd`, appending its output to `logFile`; resolves with its exit code
 * (or 124 after `timeoutMs`, when it is killed).
 */
export function run(command, args, { cwd, env = process.env, logFile, timeoutMs = 300_000 }) {
  return new Promise((resolve) => {
    const log = createWriteStream(logFile, { flags: 'a' });
    log.write(`$ ${command} ${args.join(' ')}\n`);
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const done = (code) => {
      clearTimeout(timer);
      log.end(() => resolve(code));
    };
    child.once('error', (error) => {
      log.write(`${error.message}\n`);
      done(127);
    });
    child.once('close', (code, signal) => done(signal === 'SIGKILL' ? 124 : (code ?? 128)));
  });
}

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** A started server: its process, whether it is still running, and how it exited. */
export function startServer(script, { cwd, env, logFile }) {
  const log = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(process.execPath, [script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let running = true;
  void exited.then(() => {
    running = false;
    log.end();
  });
  return {
    pid: child.pid,
    get running() {
      return running;
    },
    exited,
    /** SIGTERM, then the exit within `timeoutMs` (SIGKILL after it: `{ timedOut: true }`). */
    async stop(timeoutMs = 30_000) {
      if (!running) return { ...(await exited), timedOut: false };
      child.kill('SIGTERM');
      let timer;
      const timeout = new Promise((resolve) => (timer = setTimeout(() => resolve(null), timeoutMs)));
      const result = await Promise.race([exited, timeout]);
      clearTimeout(timer);
      if (result) return { ...result, timedOut: false };
      child.kill('SIGKILL');
      return { ...(await exited), timedOut: true };
    },
  };
}
