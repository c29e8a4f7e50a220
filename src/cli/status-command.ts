import { readMigrationStatus } from '../database/migration-status';
import { DATABASE_OPTIONS_HELP, databaseUrlOf, modulesOf, parseCommand } from './cli-arguments';
import { withDataSource, type CliCommand } from './cli-command';
import { CliExit, CliFailure } from './cli-failure';

/** `status`: the applied and pending migrations of each module; exit 1 while any is pending. */
export const statusCommand: CliCommand = {
  name: 'status',
  summary: 'list the applied and pending migrations of each module (exit 1 when any is pending)',
  help: [
    'usage: nest-agent-runtime status [--url <postgres url>] [--modules <a,b>]',
    '',
    'Prints one line per migration of the modules (every module when --modules is absent):',
    '"<module> applied|pending <migration>". Reads only.',
    '',
    'options:',
    ...DATABASE_OPTIONS_HELP,
    '',
    'exit: 0 nothing pending, 1 migrations pending, 2 usage, 3 database unreachable or schema problem',
  ].join('\n'),
  async run(args, env, io) {
    const { values } = parseCommand(args, { strings: ['url', 'modules'] });
    const url = databaseUrlOf(values.url, env);
    const modules = modulesOf(values.modules);
    const status = await withDataSource(url, modules, (dataSource) => readMigrationStatus(dataSource, modules));
    const width = Math.max(...status.groups.map((entry) => entry.group.length));
    for (const entry of status.groups) {
      for (const name of entry.applied) io.out(`${entry.group.padEnd(width)}  applied  ${name}`);
      for (const name of entry.pending) io.out(`${entry.group.padEnd(width)}  pending  ${name}`);
    }
    if (status.mismatches.length > 0) {
      const names = status.mismatches.map((mismatch) => mismatch.property.replace(/^migration:/, '')).join(', ');
      throw new CliFailure('schema_mismatch', `pending migrations whose tables exist already (their rows were deleted): ${names}`, CliExit.unavailable);
    }
    const pending = status.groups.filter((entry) => entry.pending.length > 0);
    if (pending.length === 0) return CliExit.ok;
    const count = pending.reduce((sum, entry) => sum + entry.pending.length, 0);
    const groups = pending.map((entry) => entry.group).join(',');
    throw new CliFailure('pending_migrations', `${count} migration${count === 1 ? '' : 's'} pending (${groups}): run nest-agent-runtime migrate --modules ${groups}`, CliExit.checkFailed);
  },
};
