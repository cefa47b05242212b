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

// `--selectProjects` takes every following word as a project name, so a test path written after
// it selects nothing and the whole project runs (minutes of e2e). Say so instead.
const selectAt = process.argv.indexOf('--selectProjects');
const strayPath = selectAt >= 0 && process.argv.slice(selectAt + 1).find((word, i, rest) => !word.startsWith('-') && rest.slice(0, i).every((w) => !w.startsWith('-')) && /[/.]/.test(word));
if (strayPath) {
  throw new Error(`jest: "${strayPath}" follows --selectProjects, which reads it as a project name. Put test paths before --selectProjects, or use --testPathPatterns.`);
}

/**
 * Two projects: `unit` (specs beside the code, plain fakes, no database) and `e2e` (test/ and
 * the `*.int.spec.ts` specs that use the harness Redis). Jest runs a project's globalSetup only
 * when at least one of its tests is selected, so `--selectProjects unit` starts no server.
 */
export default {
  testTimeout: 60_000,
  // With --coverage (the unit run of `npm test`): V8's own counters, every source file counted,
  // the per-library figures printed by scripts/coverage-summary.mjs.
  coverageProvider: 'v8',
  collectCoverageFrom: ['{apps,libs}/*/src/**/*.ts', '!**/*.spec.ts'],
  coverageReporters: ['json-summary'],
  projects: [
    {
      ...shared,
      displayName: 'unit',
      // These test/ files need no server: they check sources, docs and node_modules.
      testMatch: ['<rootDir>/{apps,libs}/**/*.spec.ts', '<rootDir>/test/{architecture,node-versions,config-docs,doc-links}.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', '\\.int\\.spec\\.ts$'],
    },
    {
      ...shared,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/**/*.test.ts', '<rootDir>/{apps,libs}/**/*.int.spec.ts'],
      testPathIgnorePatterns: ['/node_modules/', '/test/(architecture|node-versions|config-docs|doc-links)\\.test\\.ts$'],
      globalSetup: '<rootDir>/test/support/global-setup.mjs',
      globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
    },
  ],
};
