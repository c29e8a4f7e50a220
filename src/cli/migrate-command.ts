import { applyAgentRuntimeMigrations } from '../database/data-source.factory';
import { migrationGroupsByName } from '../database/migration-groups';
import { DATABASE_OPTIONS_HELP, databaseUrlOf, modulesOf, parseCommand } from './cli-arguments';
import { withDataSource, type CliCommand } from './cli-command';
import { CliExit } from './cli-failure';

/** `migrate`: applies the pending migrations of the modules asked for. */
export const migrateCommand: CliCommand = {
  name: 'migrate',
  summary: 'apply the pending migrations of the modules',
  help: [
    'usage: nest-agent-runtime migrate [--url <postgres url>] [--modules <a,b>]',
    '',
    'Applies the pending migrations of the modules (every module when --modules is absent), each in its',
    'own transaction, under an advisory lock so instances starting together apply them once. Prints one',
    'line per migration applied. A pending migration whose tables exist already (its row in the',
    'migrations table was deleted) is a schema problem: nothing runs, exit 3.',
    '',
    'options:',
    ...DATABASE_OPTIONS_HELP,
    '',
    'exit: 0 applied or up to date, 2 usage, 3 database unreachable or schema problem',
  ].join('\n'),
  async run(args, env, io) {
    const { values } = parseCommand(args, { strings: ['url', 'modules'] });
    const url = databaseUrlOf(values.url, env);
    const modules = modulesOf(values.modules);
    const applied = await withDataSource(url, modules, applyAgentRuntimeMigrations);
    const groups = migrationGroupsByName();
    for (const name of applied) io.out(`applied ${groups.get(name) ?? '-'} ${name}`);
    io.out(`up to date: ${modules.join(', ')}`);
    return CliExit.ok;
  },
};
