import { spawn } from 'node:child_process';
import * as path from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { docBlocks } = require('../../../scripts/docs/doc-blocks.cjs') as { docBlocks: (root: string, langs: string[]) => DocBlock[] };

/** The repository, where the examples run (`--data @examples/…` paths are relative to it). */
export const ROOT = path.resolve(__dirname, '..', '..', '..');

/** A fenced block of a doc file (see `scripts/docs/doc-blocks.cjs`). */
export interface DocBlock {
  readonly file: string;
  readonly line: number;
  readonly lang: string;
  readonly code: string;
  readonly markers: Readonly<Record<string, string>>;
}

/** One `$ command` of a console block and the output lines shown under it. */
export interface ShellStep {
  readonly command: string;
  readonly expected: readonly string[];
  /** Line of the command in the doc file. */
  readonly line: number;
}

/** Every ```console block of the README and docs/*.md. */
export function consoleBlocks(): DocBlock[] {
  return docBlocks(ROOT, ['console']);
}

/** The commands of a console block, each with its shown output; `\` at a line's end continues the command. */
export function stepsOf(block: DocBlock): ShellStep[] {
  const steps: Array<{ command: string; expected: string[]; line: number }> = [];
  const lines = block.code.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const text = lines[index];
    if (text.startsWith('$ ')) {
      let command = text.slice(2);
      const line = block.line + 1 + index;
      while (command.endsWith('\\') && index + 1 < lines.length) command = `${command}\n${lines[++index]}`;
      steps.push({ command, expected: [], line });
    } else if (steps.length) steps[steps.length - 1].expected.push(text);
  }
  return steps;
}

/** `NAME=value` pairs of an `<!-- env: … -->` marker. */
export function envOf(block: DocBlock): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of (block.markers.env ?? '').split(/\s+/).filter(Boolean)) {
    const [name, ...value] = pair.split('=');
    env[name] = value.join('=');
  }
  return env;
}

/**
 * The instances an `<!-- instances: 3001=node-a 3002=node-b -->` marker asks for: the port the block writes
 * (`localhost:3001`) and the cluster instance id of each. Without the marker: one service at `localhost:3000`,
 * not in cluster mode.
 */
export function instancesOf(block: DocBlock): Array<{ port: string; instanceId: string | null }> {
  const marker = block.markers.instances;
  if (marker === undefined) return [{ port: '3000', instanceId: null }];
  return marker
    .split(/\s+/)
    .filter(Boolean)
    .map((pair) => {
      const [port, instanceId] = pair.split('=');
      return { port, instanceId };
    });
}

/** Variables (`$NAME`, `${NAME}`) a step uses that no earlier step of its block assigned (`NAME=…`). */
export function unassignedVariables(steps: readonly ShellStep[]): string[] {
  const assigned = new Set<string>();
  const missing: string[] = [];
  for (const step of steps) {
    // a step may use what it assigns itself (`for i in …; do … $i`, `A=…; echo $A`)
    for (const [, name] of step.command.matchAll(/(?:^|[;&|(\s])([A-Za-z_][A-Za-z0-9_]*)=/g)) assigned.add(name);
    for (const [, name] of step.command.matchAll(/\bfor\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\b/g)) assigned.add(name);
    for (const [, name] of step.command.matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/g)) if (!assigned.has(name) && !missing.includes(name)) missing.push(name);
  }
  return missing;
}

/**
 * True when `actual` is the output `expected` shows: equal line for line once both ends are trimmed,
 * where `…` stands for any text, across lines too.
 */
export function outputMatches(expected: readonly string[], actual: string): boolean {
  const shown = expected.join('\n').trim();
  const pattern = shown.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[\\s\\S]*?');
  return new RegExp(`^${pattern}$`).test(actual.replace(/\r/g, '').trim());
}

/**
 * Runs the steps in order in one bash (so variables carry over), each `localhost:<port>` replaced by the base URL
 * of `bases[port]`;
 * answers each step's standard output.
 */
export async function runSteps(steps: readonly ShellStep[], bases: Readonly<Record<string, string>>, timeoutMs: number): Promise<string[]> {
  const marker = (index: number) => `@@docs-step-${index}@@`;
  const addressed = (command: string) => command.replace(/(?:http:\/\/)?localhost:(\d+)/g, (written, port: string) => bases[port] ?? written);
  const script = steps.map((step, index) => `printf '\\n${marker(index)}\\n'\n${addressed(step.command)}`).join('\n');
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(timer);
      resolve(stdout);
    });
  });
  const parts = output.split(/\n@@docs-step-(\d+)@@\n/);
  const outputs = steps.map(() => '');
  for (let index = 1; index < parts.length; index += 2) outputs[Number(parts[index])] = parts[index + 1] ?? '';
  return outputs;
}
