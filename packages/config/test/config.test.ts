/** Configuration checks that protect a distributed deployment. */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { assertRunnable, ConfigError, loadConfig } from '..';

const ROOT = path.resolve(__dirname, '../../..');

describe('distributed configuration', () => {
  it('refuses TRANSPORTER without DATABASE_URL for a process that runs services', () => {
    const config = loadConfig({ TRANSPORTER: 'nats://127.0.0.1:4222', SERVICES: 'ledger' });
    expect(() => assertRunnable(config)).toThrow(ConfigError);
    expect(() => assertRunnable(config)).toThrow(/DATABASE_URL/);
    expect(() => assertRunnable(loadConfig({ TRANSPORTER: 'nats://x:4222', SERVICES: 'ledger', DATABASE_URL: 'postgres://db/x' }))).not.toThrow();
    expect(() => assertRunnable(loadConfig({}))).not.toThrow();
  });

  it('exits non-zero with a clear message before touching the network', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/main.ts')], {
      cwd: ROOT,
      env: { ...process.env, TRANSPORTER: 'nats://127.0.0.1:1', SERVICES: 'ledger', DATABASE_URL: '', PORT: '0' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/TRANSPORTER is set but DATABASE_URL is not/);
  }, 70_000);

  it('reads DATABASE_POOL_MAX and the heartbeat settings', () => {
    expect(loadConfig({}).databasePoolMax).toBe(10);
    expect(loadConfig({ DATABASE_POOL_MAX: '4' }).databasePoolMax).toBe(4);
    expect(() => loadConfig({ DATABASE_POOL_MAX: '0' })).toThrow(/DATABASE_POOL_MAX/);
    expect(loadConfig({}).heartbeatTimeoutS).toBeGreaterThan(loadConfig({}).heartbeatIntervalS);
    expect(() => loadConfig({ HEARTBEAT_INTERVAL_S: '5', HEARTBEAT_TIMEOUT_S: '3' })).toThrow(/HEARTBEAT_TIMEOUT_S/);
  });
});
