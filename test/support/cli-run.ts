import * as path from 'node:path';
import { runCli } from '../../src/cli/run-cli';

/** What one in-process run of the bin wrote, and its exit code. */
export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  /** The lines written to stderr. */
  readonly stderr: readonly string[];
}

export const REPO_ROOT = path.resolve(__dirname, '..', '..');

/** An unreachable server whose URL carries a password that must never be printed. */
export const UNREACHABLE_URL = 'postgres://postgres:secret-password-7f3a@127.0.0.1:1/nowhere';

/** Runs `runCli(argv, env)` with the repository as the working directory. */
export async function cli(argv: readonly string[], env: Record<string, string | undefined> = {}): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, env, { out: (line) => out.push(line), err: (line) => err.push(line), cwd: REPO_ROOT });
  return { code, stdout: out.join('\n'), stderr: err };
}

/**
 * The run failed with exit `exit` and exactly one stderr line `nest-agent-runtime: <code>: …`: no
 * stack frame, no password. Returns the line.
 */
export function expectFailure(run: CliRun, exit: number, code: string): string {
  expect({ code: run.code, lines: run.stderr.length, line: run.stderr[0] }).toEqual({ code: exit, lines: 1, line: expect.stringMatching(new RegExp(`^nest-agent-runtime: ${code}: \\S`)) });
  const line = run.stderr[0];
  expect(line).not.toMatch(/\n|\s+at\s+\S+ \(|secret-password/);
  return line;
}
