import { DataSource } from 'typeorm';
import { agentRuntimeDataSourceOptions } from '../database/data-source.factory';
import type { AgentRuntimeMigrationGroup } from '../database/migration-groups';
import { connectFailure } from './cli-failure';

/** Where the bin writes: one line per call, without its newline. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  /** The directory relative paths (`--agents`) are resolved from. */
  readonly cwd: string;
}

/** The environment the bin reads (`DATABASE_URL`). */
export type CliEnv = Readonly<Record<string, string | undefined>>;

/** One command of the bin. */
export interface CliCommand {
  readonly name: string;
  /** One line for the list of commands. */
  readonly summary: string;
  /** The command's `--help` text. */
  readonly help: string;
  /** Runs with the words after the command name; resolves to the exit code or throws a failure. */
  run(args: readonly string[], env: CliEnv, io: CliIo): Promise<number>;
}

/**
 * Runs `work` on an initialised data source on `url` carrying the migrations of `modules`, and
 * destroys it afterwards. Any failure to connect (refused, authentication, no such database) is
 * `database_unreachable`; the URL is never part of a failure.
 */
export async function withDataSource<T>(url: string, modules: readonly AgentRuntimeMigrationGroup[], work: (dataSource: DataSource) => Promise<T>): Promise<T> {
  const dataSource = new DataSource(agentRuntimeDataSourceOptions(url, { modules, extra: { max: 2, application_name: 'nest-agent-runtime-cli' } }));
  try {
    await dataSource.initialize();
  } catch (error) {
    throw connectFailure(error);
  }
  try {
    return await work(dataSource);
  } finally {
    await dataSource.destroy().catch(() => undefined);
  }
}
