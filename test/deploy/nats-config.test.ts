/**
 * deploy/nats/nats-server.conf + auth.conf, the configuration compose mounts and Kubernetes gets as a
 * ConfigMap, run by a real nats-server (a private one on free ports, as the containers run it:
 * `-c nats-server.conf -sd <store>`) with the passwords scripts/market-secrets.sh generates (nats.env
 * in its environment, each service's own env file for the clients): JetStream is on, a connection
 * without credentials or with a wrong password is refused, each service's user gets in.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { eventually, freePort, REPO_ROOT } from '../kit';
import { NATS_SERVER_BIN, natsServerAvailable } from '../../packages/cluster/nats-server';

const SERVICES = ['gateway', 'agents', 'listings', 'escrow', 'ledger', 'payments', 'support', 'notifications'];
const describeNats = natsServerAvailable() ? describe : describe.skip;

describeNats('deploy/nats: the shipped NATS configuration on a real nats-server', () => {
  let passwords: Record<string, string>;
  let server: ChildProcess;
  let storeDir: string;
  let url: string;
  let monitorUrl: string;
  let log = '';

  beforeAll(async () => {
    const [port, monitor] = [await freePort(), await freePort()];
    url = `nats://127.0.0.1:${port}`;
    monitorUrl = `http://127.0.0.1:${monitor}`;
    storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nats-conf-'));
    const secrets = path.join(storeDir, 'secrets');
    execFileSync(path.join(REPO_ROOT, 'scripts/market-secrets.sh'), [secrets], { env: { PATH: process.env.PATH }, stdio: 'ignore' });
    const envOf = (name: string) =>
      Object.fromEntries(
        fs
          .readFileSync(path.join(secrets, `${name}.env`), 'utf8')
          .split('\n')
          .filter((l) => /^[A-Z_]+=/.test(l))
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      );
    passwords = Object.fromEntries(SERVICES.map((s) => [s, envOf(s).NATS_PASSWORD]));
    const env = { PATH: process.env.PATH, ...envOf('nats') };
    server = spawn(
      NATS_SERVER_BIN,
      ['-c', path.join(REPO_ROOT, 'deploy/nats/nats-server.conf'), '-a', '127.0.0.1', '-p', String(port), '-m', String(monitor), '-sd', storeDir],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    server.stdout!.on('data', (d) => (log += d));
    server.stderr!.on('data', (d) => (log += d));
    await eventually(
      () =>
        new Promise<boolean>((resolve) => {
          const s = net.connect(port, '127.0.0.1', () => {
            s.destroy();
            resolve(true);
          });
          s.on('error', () => resolve(false));
        }),
      15_000,
      100,
    ).catch((err) => {
      throw new Error(`nats-server did not start: ${String(err)}\n${log}`);
    });
  }, 30_000);

  afterAll(async () => {
    if (server && server.exitCode === null) {
      const exited = new Promise((r) => server.once('exit', r));
      server.kill('SIGTERM');
      await exited;
    }
    if (storeDir) fs.rmSync(storeDir, { recursive: true, force: true });
  });

  const attempt = async (opts: { user?: string; pass?: string }): Promise<string> => {
    let nc: NatsConnection | undefined;
    try {
      nc = await connect({ servers: url, reconnect: false, timeout: 5_000, ...opts });
      return 'connected';
    } catch (err) {
      return String((err as { code?: string }).code ?? (err as Error).message);
    } finally {
      await nc?.close();
    }
  };

  it('refuses a connection without credentials, and one with a wrong password', async () => {
    expect(await attempt({})).toBe('AUTHORIZATION_VIOLATION');
    expect(await attempt({ user: 'ledger', pass: 'not-the-password' })).toBe('AUTHORIZATION_VIOLATION');
    expect(await attempt({ user: 'ledger', pass: passwords.agents })).toBe('AUTHORIZATION_VIOLATION');
  });

  it('has JetStream on: the probe the StatefulSet uses answers 200', async () => {
    const res = await fetch(`${monitorUrl}/healthz?js-enabled-only=true`);
    expect(res.status).toBe(200);
    const jsz = (await (await fetch(`${monitorUrl}/jsz`)).json()) as { config?: { store_dir?: string } };
    expect(jsz.config?.store_dir).toBe(path.join(storeDir, 'jetstream'));
  });

  it.each(SERVICES)('lets %s in with its own password', async (s) => {
    const nc = await connect({ servers: url, reconnect: false, user: s, pass: passwords[s] });
    try {
      await nc.flush();
      expect(nc.info?.auth_required).toBe(true);
    } finally {
      await nc.close();
    }
  });
});
