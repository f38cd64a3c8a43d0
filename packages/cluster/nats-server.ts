/**
 * A private nats-server (JetStream on, its own store dir, a free port): the bus of `npm run cluster`, and of
 * tests that stop and restart NATS (CI's shared NATS must keep running). Skips (returns null) when the binary is missing.
 * startPrivateNatsCluster: N of them routed into one JetStream cluster (`npm run cluster -- --nats-nodes 3`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const NATS_SERVER_BIN = process.env.NATS_SERVER_BIN || '/usr/sbin/nats-server';

export interface PrivateNats {
  /** The client URL; for a cluster, every node's, comma-separated (as TRANSPORTER takes them). */
  url: string;
  /** The (first) node's client port. */
  port: number;
  storeDir: string;
  /** The nodes of a cluster (startPrivateNatsCluster); one node is its own only node. */
  nodes?: PrivateNatsNode[];
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

/** One node of a private NATS cluster. */
export interface PrivateNatsNode extends PrivateNats {
  /** Its server_name (n1, n2, …): what JetStream names as a stream's leader. */
  name: string;
  /** Its monitoring port (/jsz, /varz). */
  monitorPort: number;
  /** SIGKILL: a crash, nothing flushed or handed over. */
  kill(): Promise<void>;
}

export interface PrivateNatsOptions {
  /** An authorization block (packages/call-table/nats-auth.ts) the server includes: bus auth on. */
  authConf?: string;
  /** nats-server's environment (the $NATS_PASSWORD_<SERVICE> the auth block refers to). */
  env?: Record<string, string>;
  /** Where config and JetStream store live (default: a fresh temp dir, removed by dispose()). */
  dir?: string;
  /** A node of a cluster: its name, route port, every node's route port, monitoring port. */
  cluster?: { serverName: string; routePort: number; routes: number[]; monitorPort: number; port: number };
}

export async function startPrivateNats(opts: PrivateNatsOptions = {}): Promise<PrivateNats> {
  const port = opts.cluster?.port ?? (await freePort());
  const storeDir = opts.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'nats-js-'));
  fs.mkdirSync(storeDir, { recursive: true });
  const args = ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', path.join(storeDir, 'jetstream')];
  if (opts.cluster) {
    const c = opts.cluster;
    if (opts.authConf) fs.writeFileSync(path.join(storeDir, 'auth.conf'), opts.authConf, { mode: 0o600 });
    const conf = [
      `server_name: ${c.serverName}`,
      // Clients notice a frozen or lost server within seconds.
      'ping_interval: "2s"',
      'ping_max: 2',
      `http: "127.0.0.1:${c.monitorPort}"`,
      `cluster {`,
      `  name: market`,
      `  listen: "127.0.0.1:${c.routePort}"`,
      `  routes: [${c.routes.map((r) => `"nats-route://127.0.0.1:${r}"`).join(', ')}]`,
      `}`,
      ...(opts.authConf ? ['include ./auth.conf'] : []),
      '',
    ].join('\n');
    fs.writeFileSync(path.join(storeDir, 'nats-server.conf'), conf, { mode: 0o600 });
    args.unshift('-c', path.join(storeDir, 'nats-server.conf'));
  } else if (opts.authConf) {
    fs.writeFileSync(path.join(storeDir, 'auth.conf'), opts.authConf, { mode: 0o600 });
    // A frozen client (SIGSTOP) is dropped after ~6 s, so its queue subscriptions stop taking requests.
    fs.writeFileSync(path.join(storeDir, 'nats-server.conf'), 'ping_interval: "2s"\nping_max: 2\ninclude ./auth.conf\n', { mode: 0o600 });
    args.unshift('-c', path.join(storeDir, 'nats-server.conf'));
  }
  let child: ChildProcess | null = null;
  let log = '';
  const nats: PrivateNats & { kill(): Promise<void> } = {
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
      c.kill('SIGCONT'); // a stopped (SIGSTOP) server cannot handle SIGTERM
      c.kill('SIGTERM');
      const timer = setTimeout(() => c.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
      child = null;
    },
    async kill() {
      const c = child;
      if (!c || c.exitCode !== null) return;
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGKILL');
      await exited;
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

/** The JetStream view of a node's monitoring endpoint (/jsz). */
export async function jetStreamStatus(node: PrivateNatsNode, query = ''): Promise<Record<string, unknown>> {
  const r = await fetch(`http://127.0.0.1:${node.monitorPort}/jsz${query}`, { signal: AbortSignal.timeout(2_000) });
  return (await r.json()) as Record<string, unknown>;
}

/** The name of the node leading a stream (from any live node's /jsz), or null while none does. */
export async function streamLeader(nodes: PrivateNatsNode[], stream: string): Promise<string | null> {
  for (const node of nodes) {
    try {
      const jsz = (await jetStreamStatus(node, '?accounts=true&streams=true')) as {
        account_details?: Array<{ stream_detail?: Array<{ name: string; cluster?: { leader?: string } }> }>;
      };
      for (const account of jsz.account_details ?? []) {
        const found = account.stream_detail?.find((s) => s.name === stream);
        if (found) return found.cluster?.leader ?? null;
      }
    } catch {
      // that node is down: ask the next
    }
  }
  return null;
}

/**
 * N private nats-servers (free client, route and monitoring ports on 127.0.0.1) routed into one JetStream
 * cluster, each with its own store under `dir`; resolves when the JetStream meta group has a leader.
 */
export async function startPrivateNatsCluster(nodes: number, opts: PrivateNatsOptions = {}): Promise<PrivateNats> {
  const dir = opts.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'nats-cluster-'));
  const ports: number[] = [];
  while (ports.length < nodes * 3) {
    const p = await freePort();
    if (!ports.includes(p)) ports.push(p);
  }
  const routes = ports.slice(nodes, 2 * nodes);
  const members = await Promise.all(
    Array.from({ length: nodes }, async (_, i): Promise<PrivateNatsNode> => {
      const name = `n${i + 1}`;
      const cluster = { serverName: name, port: ports[i], routePort: routes[i], routes, monitorPort: ports[2 * nodes + i] };
      const node = await startPrivateNats({ ...opts, dir: path.join(dir, name), cluster });
      return Object.assign(node as PrivateNatsNode, { name, monitorPort: cluster.monitorPort });
    }),
  );
  const deadline = Date.now() + 30_000;
  for (;;) {
    const jsz = await jetStreamStatus(members[0]).catch(() => ({}) as Record<string, unknown>);
    const meta = jsz.meta_cluster as { leader?: string; cluster_size?: number } | undefined;
    if (meta?.leader) break;
    if (Date.now() > deadline) throw new Error(`the NATS cluster elected no JetStream leader in 30 s: ${JSON.stringify(jsz)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url: members.map((m) => m.url).join(','),
    port: members[0].port,
    storeDir: dir,
    nodes: members,
    async start() {
      await Promise.all(members.map((m) => m.start()));
    },
    async stop() {
      await Promise.all(members.map((m) => m.stop()));
    },
    async dispose() {
      await Promise.all(members.map((m) => m.stop()));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
