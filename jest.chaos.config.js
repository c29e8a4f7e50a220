/**
 * The chaos suite (`npm run test:chaos`, after `npm run build`): the built reference service under
 * load through a Postgres blink, on a throw-away embedded server of its own. One file at a time:
 * the suites measure timing and each starts its own processes.
 * @type {import('jest').Config}
 */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test/chaos'],
  testMatch: ['**/*.chaos.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  moduleFileExtensions: ['ts', 'js', 'json'],
  maxWorkers: 1,
  testTimeout: 240_000,
};
