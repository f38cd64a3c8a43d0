/** Configuration checks that protect a distributed deployment. */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { assertRunnable, ConfigError, databaseUrlFor, loadConfig } from '..';

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

  it('gives each service its own database URL, falling back to DATABASE_URL', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://shared/db', LEDGER_DATABASE_URL: 'postgres://market_ledger@ledger-pg/db' });
    expect(databaseUrlFor(config, 'ledger')).toBe('postgres://market_ledger@ledger-pg/db');
    expect(databaseUrlFor(config, 'escrow')).toBe('postgres://shared/db');
    expect(databaseUrlFor(loadConfig({}), 'ledger')).toBeNull(); // embedded PGlite, unchanged
    // A ledger process with only its own URL is runnable; one without any is not.
    expect(() => assertRunnable(loadConfig({ TRANSPORTER: 'nats://x:4222', SERVICES: 'ledger', LEDGER_DATABASE_URL: 'postgres://l/db' }))).not.toThrow();
    expect(() => assertRunnable(loadConfig({ TRANSPORTER: 'nats://x:4222', SERVICES: 'escrow', LEDGER_DATABASE_URL: 'postgres://l/db' }))).toThrow(ConfigError);
  });

  it('reads the bus credentials from NATS_USER and NATS_PASSWORD or NATS_PASSWORD_FILE, both or neither', () => {
    expect(loadConfig({ NATS_USER: 'ledger', NATS_PASSWORD: 'pw1' })).toMatchObject({ natsUser: 'ledger', natsPassword: 'pw1' });
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cfg-')), 'nats-password');
    fs.writeFileSync(file, 'pfromfile\n');
    expect(loadConfig({ NATS_USER: 'ledger', NATS_PASSWORD_FILE: file })).toMatchObject({ natsPassword: 'pfromfile' });
    expect(() => loadConfig({ NATS_USER: 'ledger' })).toThrow(/NATS_USER and NATS_PASSWORD/);
    expect(() => loadConfig({ NATS_USER: 'ledger', NATS_PASSWORD_FILE: '/nonexistent/pw' })).toThrow(/NATS_PASSWORD_FILE/);
    expect(loadConfig({})).toMatchObject({ natsUser: null, natsPassword: null });
  });
});
