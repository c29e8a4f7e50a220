import type { CliCommand, CliEnv, CliIo } from './cli-command';
import { CliExit, cliFailureOf, oneLine, usageFailure } from './cli-failure';
import { evalGateCommand } from './eval-gate-command';
import { migrateCommand } from './migrate-command';
import { statusCommand } from './status-command';
import { verifyAuditCommand } from './verify-audit-command';

/** The name the bin prints its failures under. */
export const CLI_NAME = 'nest-agent-runtime';

const COMMANDS: readonly CliCommand[] = [migrateCommand, statusCommand, verifyAuditCommand, evalGateCommand];

const HELP = [
  `usage: ${CLI_NAME} <command> [options]`,
  '',
  'commands:',
  ...COMMANDS.map((command) => `  ${command.name.padEnd(14)}${command.summary}`),
  '',
  'The database is --url <postgres url> or DATABASE_URL. `<command> --help` shows the options of a command.',
  '',
  'exit: 0 ok, 1 the check failed, 2 usage, 3 database unreachable or schema problem.',
  `A failure prints one line on stderr: "${CLI_NAME}: <code>: <message>".`,
].join('\n');

/**
 * The bin without a process: runs the command `argv[0]` with the words after it, reads `env`
 * (`DATABASE_URL`), writes to `io`, and resolves to the exit code. It never rejects: any failure is
 * one line `nest-agent-runtime: <code>: <message>` on `io.err`, never a stack trace nor the URL.
 *
 * @example
 * process.exitCode = await runCli(process.argv.slice(2), process.env, { out: console.log, err: console.error, cwd: process.cwd() });
 */
export async function runCli(argv: readonly string[], env: CliEnv, io: CliIo): Promise<number> {
  try {
    const [name, ...args] = argv;
    if (name === '--help' || name === '-h' || name === 'help') {
      io.out(HELP);
      return CliExit.ok;
    }
    if (name === undefined) throw usageFailure('missing_command', `name a command: ${COMMANDS.map((command) => command.name).join(', ')} (see --help)`);
    const command = COMMANDS.find((candidate) => candidate.name === name);
    if (command === undefined) throw usageFailure('unknown_command', `the commands are ${COMMANDS.map((each) => each.name).join(', ')} (see --help)`);
    if (args.includes('--help') || args.includes('-h')) {
      io.out(command.help);
      return CliExit.ok;
    }
    return await command.run(args, env, io);
  } catch (error) {
    const failure = cliFailureOf(error);
    io.err(oneLine(`${CLI_NAME}: ${failure.code}: ${failure.detail}`));
    return failure.exitCode;
  }
}
