/**
 * A private nats-server (JetStream on, its own store dir, a free port): the bus of `npm run cluster`, and of
 * tests that stop and restart NATS (CI's shared NATS must keep running). Skips (returns null) when the binary is missing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const NATS_SERVER_BIN = process.env.NATS_SERVER_BIN || '/usr/sbin/nats-server';

export interface PrivateNats {
  url: string;
  port: number;
  storeDir: string;
  /** Starts (again) on the same port and store dir; resolves when it accepts connections. */
  start(): Promise<void>;
  /** Stops it (SIGTERM, then SIGKILL) and waits for the exit. */
  stop(): Promise<void>;
  /** Stops and removes the store dir. */
  dispose(): Promise<void>;
}

export function natsServerAvailable(): boolean {
  return fs.existsSync(NATS_SERVER_BIN);
}

/** A TCP port on 127.0.0.1 that nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nats-server did not listen on ${port} in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface PrivateNatsOptions {
  /** An authorization block (packages/call-table/nats-auth.ts) the server includes: bus auth on. */
  authConf?: string;
  /** nats-server's environment (the $NATS_PASSWORD_<SERVICE> the auth block refers to). */
  env?: Record<string, string>;
  /** Where config and JetStream store live (default: a fresh temp dir, removed by dispose()). */
  dir?: string;
}

export async function startPrivateNats(opts: PrivateNatsOptions = {}): Promise<PrivateNats> {
  const port = await freePort();
  const storeDir = opts.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'nats-js-'));
  fs.mkdirSync(storeDir, { recursive: true });
  const args = ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', path.join(storeDir, 'jetstream')];
  if (opts.authConf) {
    fs.writeFileSync(path.join(storeDir, 'auth.conf'), opts.authConf, { mode: 0o600 });
    // A frozen client (SIGSTOP) is dropped after ~6 s, so its queue subscriptions stop taking requests.
    fs.writeFileSync(path.join(storeDir, 'nats-server.conf'), 'ping_interval: "2s"\nping_max: 2\ninclude ./auth.conf\n', { mode: 0o600 });
    args.unshift('-c', path.join(storeDir, 'nats-server.conf'));
  }
  let child: ChildProcess | null = null;
  let log = '';
  const nats: PrivateNats = {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    async start() {
      if (child) return;
      log = '';
      child = spawn(NATS_SERVER_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...opts.env } });
      child.stdout!.on('data', (d) => (log += d));
      child.stderr!.on('data', (d) => (log += d));
      const c = child;
      c.on('exit', () => {
        if (child === c) child = null;
      });
      try {
        await Promise.race([
          waitForPort(port, 15_000),
          new Promise((_, reject) => c.once('exit', (code) => reject(new Error(`nats-server exited (${code})`)))),
        ]);
      } catch (err) {
        throw new Error(`${(err as Error).message}\n${log}`, { cause: err });
      }
    },
    async stop() {
      const c = child;
      if (!c || c.exitCode !== null) return;
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGTERM');
      const timer = setTimeout(() => c.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
      child = null;
    },
    async dispose() {
      await nats.stop();
      fs.rmSync(storeDir, { recursive: true, force: true });
    },
  };
  await nats.start();
  return nats;
}
