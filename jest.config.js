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

/** What both projects share: how sources are transformed and resolved. */
const shared = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', swc] },
  // The libs' `#…` imports resolve through package.json "imports": its `dataagent-source` condition points at the sources.
  testEnvironmentOptions: { customExportConditions: ['dataagent-source', 'node', 'node-addons'] },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
};

/**
 * Two projects: `unit` (specs beside the code, plain fakes, no database) and `e2e` (test/ and
 * the `*.int.spec.ts` specs that use the harness Redis). Jest runs a project's globalSetup only
 * when at least one of its tests is selected, so `--selectProjects unit` starts no server.
 */
export default {
  testTimeout: 60_000,
  projects: [
    {
      ...shared,
      displayName: 'unit',
      // test/architecture.test.ts and test/node-versions.test.ts need no server: they check sources and node_modules.
      testMatch: ['<rootDir>/{apps,libs}/**/*.spec.ts', '<rootDir>/test/{architecture,node-versions}.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', '\\.int\\.spec\\.ts$'],
    },
    {
      ...shared,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/**/*.test.ts', '<rootDir>/{apps,libs}/**/*.int.spec.ts'],
      testPathIgnorePatterns: ['/node_modules/', '/test/(architecture|node-versions)\\.test\\.ts$'],
      globalSetup: '<rootDir>/test/support/global-setup.mjs',
      globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
    },
  ],
};
