/**
 * The browser suite (`npm run test:browser`): the operator console in headless Chromium, driven by
 * puppeteer-core against the real reference service. Its own testMatch keeps it out of `npm test`;
 * the global setup is the main suite's (package build, embedded Postgres, migrations).
 * @type {import('jest').Config}
 */
module.exports = {
  testEnvironment: '<rootDir>/test/browser/support/browser-environment.js',
  roots: ['<rootDir>/test/browser'],
  testMatch: ['**/*.browser.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  moduleFileExtensions: ['ts', 'js', 'json'],
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  testTimeout: 60000,
  // one browser and one service at a time on a small machine
  maxWorkers: 1,
};
