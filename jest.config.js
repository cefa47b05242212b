/** Jest runs the TypeScript sources as ESM through SWC (Nest 12 packages are ESM-only). */
const swc = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2022',
  },
  module: { type: 'es6' },
  sourceMaps: 'inline',
};

export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', swc] },
  // The libs' `#…` imports resolve through package.json "imports": its `dataagent-source` condition points at the sources.
  testEnvironmentOptions: { customExportConditions: ['dataagent-source', 'node', 'node-addons'] },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testMatch: ['<rootDir>/{apps,libs}/**/*.spec.ts', '<rootDir>/test/**/*.test.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.mjs',
  globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
  testTimeout: 60_000,
};
