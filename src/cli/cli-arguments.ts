import { parseArgs } from 'node:util';
import { AGENT_RUNTIME_MIGRATION_GROUPS, isMigrationGroup, type AgentRuntimeMigrationGroup } from '../database/migration-groups';
import { usageFailure } from './cli-failure';

/** The options of one command: each a string option, plus `--help`. */
export interface CommandOptions<Name extends string> {
  readonly strings: readonly Name[];
}

/** What the command line of one command said. */
export interface ParsedCommand<Name extends string> {
  readonly help: boolean;
  readonly values: Partial<Record<Name, string>>;
}

/**
 * Reads `args` (the words after the command) against the command's string options and `--help`/`-h`.
 * An unknown option, an option without its value, or a word that is no option's value is a usage
 * failure naming the option, never echoing a value (a URL may carry a password).
 */
export function parseCommand<Name extends string>(args: readonly string[], options: CommandOptions<Name>): ParsedCommand<Name> {
  const config = Object.fromEntries([...options.strings.map((name) => [name, { type: 'string' as const }]), ['help', { type: 'boolean' as const, short: 'h' }]]);
  const { tokens } = parseArgs({ args: [...args], options: config, strict: false, allowPositionals: true, tokens: true });
  const values: Partial<Record<Name, string>> = {};
  let help = false;
  for (const token of tokens) {
    if (token.kind === 'positional') throw usageFailure('invalid_arguments', `unexpected argument at position ${token.index + 1}: options are --name value`);
    if (token.kind === 'option-terminator') continue;
    const shown = token.rawName.startsWith('--') ? `--${token.name}` : token.rawName;
    if (token.name === 'help' && token.value === undefined) help = true;
    else if ((options.strings as readonly string[]).includes(token.name)) {
      if (token.value === undefined || token.value === '') throw usageFailure('invalid_arguments', `${shown} needs a value`);
      values[token.name as Name] = token.value;
    } else throw usageFailure('invalid_arguments', `unknown option ${/^-{1,2}[A-Za-z0-9][A-Za-z0-9-]{0,40}$/.test(shown) ? shown : '(not shown)'}`);
  }
  return { help, values };
}

/** The database URL: `--url`, else `DATABASE_URL`; a usage failure when neither is a `postgres://` URL. */
export function databaseUrlOf(flag: string | undefined, env: Readonly<Record<string, string | undefined>>): string {
  const url = flag ?? env.DATABASE_URL;
  if (url === undefined || url.trim() === '') throw usageFailure('missing_url', 'no database: pass --url or set DATABASE_URL');
  let protocol: string | null = null;
  try {
    protocol = new URL(url).protocol;
  } catch {
    protocol = null;
  }
  if (protocol !== 'postgres:' && protocol !== 'postgresql:') throw usageFailure('invalid_url', 'the database URL is not a postgres:// or postgresql:// URL');
  return url;
}

/** `--modules a,b` as group names (every group when absent); an unknown name is a usage failure listing the known ones. */
export function modulesOf(flag: string | undefined): readonly AgentRuntimeMigrationGroup[] {
  if (flag === undefined) return AGENT_RUNTIME_MIGRATION_GROUPS;
  const names = flag.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !isMigrationGroup(name));
  if (unknown.length > 0) {
    const shown = unknown.map((name) => (/^[A-Za-z0-9_-]{1,40}$/.test(name) ? `"${name}"` : '(a name not shown)')).join(', ');
    throw usageFailure('unknown_module', `--modules: ${shown} is not a module; the modules are ${AGENT_RUNTIME_MIGRATION_GROUPS.join(', ')}`);
  }
  return names as AgentRuntimeMigrationGroup[];
}

/** The help lines of the two options every database command takes. */
export const DATABASE_OPTIONS_HELP: readonly string[] = [
  '  --url <url>        the database (default: DATABASE_URL)',
  `  --modules <a,b>    ${AGENT_RUNTIME_MIGRATION_GROUPS.join(', ')} (default: all)`,
];
