import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { AS_ALICE } from '../../e2e/support/reference-service';
import { HttpClient } from '../../e2e/support/http-client';

/** The compiled reference service (the Jest global setup builds the package first). */
const MAIN = resolve(__dirname, '..', '..', '..', 'dist', 'src', 'main.js');

/** One instance of the reference service in cluster mode, in a process of its own. */
export interface ClusterNode {
  readonly instanceId: string;
  readonly pid: number;
  readonly port: number;
  readonly http: HttpClient;
  /** Everything it printed so far, one entry per line. */
  readonly lines: readonly string[];
  /** `kill -9`: the process gets no chance to release anything. */
  kill(): Promise<void>;
  /** SIGTERM, then waits for the exit (the graceful shutdown). */
  stop(): Promise<number | null>;
}

/**
 * Starts `node dist/src/main.js` with `CLUSTER=1` on `databaseUrl` (already migrated) and a free
 * port, and resolves once it is listening. `env` adds settings such as the admission limits.
 */
export async function startClusterNode(databaseUrl: string, instanceId: string, env: Record<string, string> = {}): Promise<ClusterNode> {
  const child: ChildProcess = spawn(process.execPath, [MAIN], {
    env: { ...process.env, ...env, DATABASE_URL: databaseUrl, CLUSTER: '1', INSTANCE_ID: instanceId, PORT: '0', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  for (const stream of [child.stdout, child.stderr]) if (stream) createInterface({ input: stream }).on('line', (line) => lines.push(line));
  const port = await new Promise<number>((resolveListening, reject) => {
    const timer = setTimeout(() => reject(new Error(`instance ${instanceId} did not start:\n${lines.join('\n')}`)), 30_000);
    const poll = setInterval(() => {
      const listening = lines.map((line) => /listening on http:\/\/localhost:(\d+)/.exec(line)).find(Boolean);
      if (!listening) return;
      clearInterval(poll);
      clearTimeout(timer);
      resolveListening(Number(listening[1]));
    }, 20);
    void exited.then((code) => {
      clearInterval(poll);
      clearTimeout(timer);
      reject(new Error(`instance ${instanceId} exited with ${code}:\n${lines.join('\n')}`));
    });
  });
  return {
    instanceId,
    pid: child.pid as number,
    port,
    http: new HttpClient(`http://127.0.0.1:${port}`, AS_ALICE),
    lines,
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}
