/**
 * @kubernetes/client-node 1.x and a few of its dependencies ship only ES modules, which jest's
 * CommonJS runtime cannot load; babel turns exactly those packages into CommonJS for the tests.
 */
const esmPackages = ['@kubernetes/client-node', 'openid-client', 'oauth4webapi', 'jose', 'jsonpath-plus', 'rfc4648', '@marcbachmann/cel-js'];

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 180000,
  // a failed test can leave a child's pipes or a watch open; CI must still end when the tests do
  forceExit: true,
  verbose: true,
  transform: {
    '^.+\\.ts$': ['ts-jest', { isolatedModules: true }],
    '^.+\\.m?js$': ['babel-jest', { presets: [['@babel/preset-env', { targets: { node: 'current' }, modules: 'commonjs' }]] }],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${esmPackages.join('|')})/)`],
};
