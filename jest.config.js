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
  moduleNameMapper: {
    '^#core/(.*)\\.js$': '<rootDir>/libs/core/src/$1',
    '^#llm/(.*)\\.js$': '<rootDir>/libs/llm/src/$1',
    '^#transport/(.*)\\.js$': '<rootDir>/libs/transport/src/$1',
    '^#persistence/(.*)\\.js$': '<rootDir>/libs/persistence/src/$1',
    '^#test/(.*)\\.js$': '<rootDir>/test/$1',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  testMatch: ['<rootDir>/{apps,libs}/**/*.spec.ts', '<rootDir>/test/**/*.test.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.mjs',
  globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
  testTimeout: 60_000,
};
