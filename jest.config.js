/** ESM-only packages the adapter tests load: `ai` and what it imports, and `lodash-es` (required by @google/adk's CommonJS build). */
const ESM_ONLY_DEPS = '(ai|@ai-sdk/[^/]+|@workflow/serde|lodash-es)';

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/src', '<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
    [`/node_modules/${ESM_ONLY_DEPS}/.+\\.js$`]: ['ts-jest', { tsconfig: 'tsconfig.esm-deps.json' }],
  },
  // The AI SDK ships ESM only, which Jest cannot require on Node 20: these packages alone are transpiled.
  transformIgnorePatterns: [`/node_modules/(?!${ESM_ONLY_DEPS}/)`],
  // provider-utils imports `zod/v4/locales/en.js`, which zod's exports map to its ESM file even for require.
  moduleNameMapper: { '^zod/v4/locales/([a-zA-Z-]+)\\.js$': '<rootDir>/node_modules/zod/v4/locales/$1.cjs' },
  moduleFileExtensions: ['ts', 'js', 'json'],
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  testTimeout: 30000,
  maxWorkers: 2,
  testEnvironmentOptions: { globalsCleanup: 'off' },
};
