/**
 * `RATE_LIMIT_PER_MINUTE=30 npm run cluster -- --replicas 2` used to start every process with the
 * spawn defaults meant for tests (RATE_LIMIT_PER_MINUTE=0, LOG_LEVEL=warn, SEED_ON_EMPTY=false) on top
 * of the operator's environment: one agent got 60 × 200 in a minute through two gateways (found by the
 * issue #24 acceptance run). The operator's values now reach every process; tests keep the defaults.
 */
import fs from 'node:fs';
import path from 'node:path';
import { operatorSettings, REPO_ROOT, spawnDefaults, spawnEnv } from '..';

describe('npm run cluster passes the operator settings the spawn defaults would replace', () => {
  const operator = { PATH: '/usr/bin', RATE_LIMIT_PER_MINUTE: '30', LOG_LEVEL: 'debug', SEED_ON_EMPTY: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };

  it('operatorSettings picks exactly the defaulted settings the operator set', () => {
    expect(operatorSettings(operator)).toEqual({ RATE_LIMIT_PER_MINUTE: '30', LOG_LEVEL: 'debug', SEED_ON_EMPTY: 'true' });
    expect(operatorSettings({ PATH: '/usr/bin', RATE_LIMIT_PER_MINUTE: '' })).toEqual({});
    expect(Object.keys(operatorSettings({ ...spawnDefaults({}), LOG_LEVEL: 'info' })).sort()).toEqual(Object.keys(spawnDefaults({})).sort());
  });

  it("a process started the way startCluster starts it (base = the operator's environment, env = its settings) gets the operator's values", () => {
    const env = spawnEnv(['gateway'], { DATA_DIR: '/tmp/x', ...operatorSettings(operator) }, operator, '3300');
    expect(env).toMatchObject({ RATE_LIMIT_PER_MINUTE: '30', LOG_LEVEL: 'debug', SEED_ON_EMPTY: 'true', SERVICES: 'gateway', PORT: '3300', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' });
  });

  it('tests and benches that pass no settings keep the quiet, unlimited defaults whatever the shell exported', () => {
    const env = spawnEnv(['gateway'], {}, operator, '0');
    expect(env).toMatchObject({ RATE_LIMIT_PER_MINUTE: '0', SEED_ON_EMPTY: 'false' });
  });

  it('scripts/cluster.ts hands operatorSettings(process.env) to startCluster', () => {
    const src = fs.readFileSync(path.join(REPO_ROOT, 'scripts/cluster.ts'), 'utf8');
    expect(src).toMatch(/startCluster\(\{[^}]*env: operatorSettings\(process\.env\)/);
  });
});
