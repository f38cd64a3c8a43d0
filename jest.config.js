/** Runs every *.test.ts; suites that need real PostgreSQL/NATS skip themselves unless TEST_DATABASE_URL and TEST_NATS_URL are set. */
module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.(t|j)s$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }],
    // Server-rendered pages (services/gateway/web) are TSX rendered by Preact.
    '^.+\\.tsx$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript', tsx: true }, transform: { react: { runtime: 'automatic', importSource: 'preact' } } }, module: { type: 'commonjs' } }],
  },
  testMatch: ['**/?(*.)test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/', '/data/'],
  maxWorkers: 2,
  testTimeout: 60000,
};
