#!/usr/bin/env node
'use strict';
/**
 * Repository only (not shipped): runs the compiled bin (`dist/src/cli/bin.js`) with the given words on
 * `DATABASE_URL`, or, when it is unset, on the project's embedded Postgres in `.data/postgres` (the
 * server `npm start` uses: reused when running, else started for the length of the command). The
 * package's bin itself never starts a database. Used by `npm run migration:run`, `migration:show`,
 * `audit:verify` and `eval:gate`; exits with the bin's code (3 when no database could be opened).
 */
const { spawn } = require('node:child_process');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const BIN = path.join(ROOT, 'dist', 'src', 'cli', 'bin.js');

async function main() {
  const { openProjectDatabase } = require(path.join(ROOT, 'dist', 'src', 'database', 'embedded', 'embedded-postgres.js'));
  let database;
  try {
    database = await openProjectDatabase();
  } catch (error) {
    process.stderr.write(`nest-agent-runtime: database_unreachable: the embedded Postgres did not start (${error && error.code ? error.code : 'unknown'}): set DATABASE_URL\n`);
    return 3;
  }
  try {
    return await new Promise((resolve) => {
      const child = spawn(process.execPath, [BIN, ...process.argv.slice(2)], { cwd: ROOT, stdio: 'inherit', env: { ...process.env, DATABASE_URL: database.url } });
      child.on('error', () => resolve(3));
      child.on('close', (code) => resolve(code ?? 3));
    });
  } finally {
    await database.stop();
  }
}

main().then((code) => {
  process.exitCode = code;
});
