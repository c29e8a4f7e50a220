#!/usr/bin/env node
import { runCli } from './run-cli';

/** `npx nest-agent-runtime <command>`: see `runCli` and docs/cli.md. */
void runCli(process.argv.slice(2), process.env, {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  cwd: process.cwd(),
}).then((code) => {
  process.exitCode = code;
});
