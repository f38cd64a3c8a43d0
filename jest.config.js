/**
 * Runs every *.test.ts. Suites that need real PostgreSQL/NATS use TEST_DATABASE_URL / TEST_NATS_URL when set,
 * else containers started by the global setup when a Docker engine is reachable, else skip saying why.
 */
module.exports = {
  testEnvironment: 'node',
  transform: {
    // Keeps import() native in the files listed, so Jest's ESM loader (--experimental-vm-modules) loads ESM-only
    // packages there: kubernetes-models 5 has no `require` export (test/kit/k8s-schema.ts). First match wins.
    'test/kit/k8s-schema\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs', ignoreDynamic: true } }],
    '^.+\\.(t|j)s$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }],
    // Server-rendered pages (services/gateway/web) are TSX rendered by Preact.
    '^.+\\.tsx$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript', tsx: true }, transform: { react: { runtime: 'automatic', importSource: 'preact' } } }, module: { type: 'commonjs' } }],
  },
  testMatch: ['**/?(*.)test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/', '/data/'],
  maxWorkers: 2,
  testTimeout: 60000,
  globalSetup: '<rootDir>/test/kit/jest-global-setup.ts',
  globalTeardown: '<rootDir>/test/kit/jest-global-teardown.ts',
};
