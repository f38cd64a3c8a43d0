/**
 * The marketplace distributed on one machine — the one way to start a cluster (`npm run cluster`, the
 * distributed test suites, the benches): a private nats-server with the bus users and permissions
 * generated from the call table (or `natsNodes` of them routed into one JetStream cluster), one PostgreSQL role per service (packages/db/roles.ts) on a database
 * of its own, and every service as its own OS process (`src/main.ts` with SERVICES=<one>), N of each,
 * each with only its own credentials; the gateways on consecutive ports.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { natsAuthConfig, natsPassword, passwordEnvVar } from '../call-table/nats-auth';
import { ALL_SERVICES, type ServiceName } from '../config';
import { base62 } from '../ids';
import { createServiceRoles, dropServiceRoles, type ServiceRole } from '../db/roles';
import { freePort, startPrivateNats, startPrivateNatsCluster, type PrivateNats } from './nats-server';

export { freePort };

export const REPO_ROOT = path.resolve(__dirname, '../..');
export const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
export const CLUSTER_DATABASE = 'agent_market_cluster';
export const CLUSTER_ROLE_PREFIX = 'market_cluster_';

export interface ServiceProcess {
  child: ChildProcess;
  services: ServiceName[];
  /** The process's PORT: the gateway, or /healthz, /readyz and /metrics for a worker. */
  port: number;
  output(): string;
  /** SIGTERM and wait for a clean exit. */
  stop(): Promise<number | null>;
  /** SIGKILL: a crash, nothing cleaned up. */
  kill(): Promise<void>;
}

/**
 * How long a spawned process may take to print that its services started. tsx compiles the sources
 * on every cold start; with CI's two cores shared by Docker builds and other suites that was seen to
 * take over 30 s (output still empty), so the bound is generous. Not a timing assertion.
 */
const SPAWN_START_MS = 60_000;

/**
 * What a spawned process gets unless told otherwise: quiet logs, no per-agent rate limit, no seed
 * listings (what tests and benches want). `npm run cluster` passes the operator's own values of these
 * through `operatorSettings`, so `RATE_LIMIT_PER_MINUTE=30 npm run cluster` limits (issue #24 acceptance).
 */
export function spawnDefaults(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return { LOG_LEVEL: env.TEST_LOG_LEVEL ?? 'warn', SEED_ON_EMPTY: 'false', RATE_LIMIT_PER_MINUTE: '0' };
}

/** How much of a spawned process's output is kept in memory (characters). */
const OUTPUT_KEPT = 4_000_000;

/** The operator's values of the settings spawnDefaults would otherwise replace (for ClusterOptions.env). */
export function operatorSettings(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.keys(spawnDefaults({})).flatMap((k) => (env[k] !== undefined && env[k] !== '' ? [[k, env[k]!]] : [])));
}

/** The environment of a spawned process: the base, the defaults above, SERVICES, `env`, PORT (later wins). */
export function spawnEnv(services: ServiceName[], env: Record<string, string>, base: NodeJS.ProcessEnv, port: string): NodeJS.ProcessEnv {
  return { ...base, ...spawnDefaults(), SERVICES: services.join(','), ...env, PORT: port };
}

/**
 * CLUSTER_NODE_BINARY: the node every spawned process runs on (default: this one) — a bench runs the code
 * before a change on the runtime it had (e.g. Node 20) beside the code after it on Node 24.
 */
export function clusterNodeBinary(env: NodeJS.ProcessEnv = process.env): string {
  return env.CLUSTER_NODE_BINARY || process.execPath;
}

/** CLUSTER_NODE_ARGS: node flags NODE_OPTIONS refuses, for every spawned process (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"). */
export function clusterNodeArgs(): string[] {
  return (process.env.CLUSTER_NODE_ARGS ?? '').split(' ').filter(Boolean);
}

/**
 * Starts `src/main.ts` as its own OS process running the given services over NATS.
 * Resolves when the process printed that its services started.
 */
export async function spawnServices(
  services: ServiceName[],
  env: Record<string, string>,
  opts: { startTimeoutMs?: number; baseEnv?: NodeJS.ProcessEnv; port?: number } = {},
): Promise<ServiceProcess> {
  let out = '';
  // Every process listens on PORT (workers serve /healthz, /readyz, /metrics there): one port each.
  // A shared env's PORT is the gateway's; a process without the gateway gets a free one.
  const port = opts.port ? String(opts.port) : services.includes('gateway') && env.PORT ? env.PORT : String(await freePort());
  const child = spawn(clusterNodeBinary(opts.baseEnv), [...clusterNodeArgs(), '--import', 'tsx', path.join(REPO_ROOT, 'src/main.ts')], {
    cwd: REPO_ROOT,
    env: spawnEnv(services, env, opts.baseEnv ?? process.env, port),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // The output is kept in memory for tests and for the exit report: the last OUTPUT_KEPT characters only, so a
  // cluster left running for days does not grow without bound.
  const keep = (d: Buffer) => {
    out += d.toString();
    if (out.length > 2 * OUTPUT_KEPT) out = out.slice(-OUTPUT_KEPT);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL'); // never leave a half-started process behind
      reject(new Error(`${services.join(',')} did not start in ${(opts.startTimeoutMs ?? SPAWN_START_MS) / 1000} s:\n${out}`));
    }, opts.startTimeoutMs ?? SPAWN_START_MS);
    const check = () => {
      if (out.includes('  services: ')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${services.join(',')} exited with ${code} before starting:\n${out}`));
    });
  });
  return {
    child,
    services,
    port: Number(port),
    output: () => out,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGCONT'); // a stopped (SIGSTOP) process cannot handle SIGTERM
      child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}

export interface ClusterOptions {
  /** Processes per service (default 1). */
  replicas?: number;
  /** Per-service exceptions to `replicas` (e.g. { gateway: 2 }). */
  replicasOf?: Partial<Record<ServiceName, number>>;
  /** Services to start (default: all eight), each in its own processes. */
  services?: readonly ServiceName[];
  /** Passed to every process on top of the parent's environment (LOG_LEVEL, SWEEP_INTERVAL_MS, …). */
  env?: Record<string, string>;
  /** Parent environment passed through (default process.env). */
  baseEnv?: NodeJS.ProcessEnv;
  /** NATS store, credentials, operator token (default <cwd>/data/cluster). */
  dataDir?: string;
  /** The PostgreSQL server (an admin URL): default DATABASE_URL, else the local server. */
  postgresUrl?: string;
  /** The database the cluster uses on that server, created if missing (default agent_market_cluster). */
  database?: string;
  /** A fresh database and fresh roles (unique prefix), dropped by stop(): for tests and benches. */
  fresh?: boolean;
  /** Role name prefix (default market_cluster_; fresh: a unique one). */
  rolePrefix?: string;
  /** The first gateway's port (the others follow); 0: free ports (default PORT, else 3000). */
  port?: number;
  namespace?: string;
  /** nats-servers routed into one JetStream cluster (default 1); every process gets all their URLs. */
  natsNodes?: number;
  startTimeoutMs?: number;
  log?: (line: string) => void;
}

export interface ServiceCredentials {
  service: ServiceName;
  natsUser: string;
  natsPassword: string;
  databaseUrl: string;
  /** The variables a process of this service needs (as written to credentials/<service>.env). */
  env: Record<string, string>;
}

export interface Cluster {
  /** http://127.0.0.1:<port> of each gateway replica, in order. */
  gateways: string[];
  gatewayPorts: number[];
  dataDir: string;
  namespace: string;
  nats: PrivateNats;
  /** The cluster's database, as the admin. */
  adminDatabaseUrl: string;
  adminToken: string;
  credentials: Record<ServiceName, ServiceCredentials>;
  processes: Record<ServiceName, ServiceProcess[]>;
  /** Environment for an extra process or a client broker using a service's credentials (default the gateway's). */
  clientEnv(service?: ServiceName): Record<string, string>;
  /** SIGKILL replica i of a service (a crash). */
  kill(service: ServiceName, i: number): Promise<void>;
  /** Starts replica i again (after kill or stop), same port for a gateway. */
  restart(service: ServiceName, i: number): Promise<ServiceProcess>;
  /** Stops every process (SIGTERM), then NATS; a fresh cluster also drops its database and roles. */
  stop(): Promise<void>;
}

const SCRUBBED = /^(DATABASE_URL|DATABASE_ADMIN_URL|[A-Z]+_DATABASE_URL|NATS_USER|NATS_PASSWORD|NATS_PASSWORD_FILE|NATS_PASSWORD_[A-Z]+|SERVICES|NODE_ID|PORT|TRANSPORTER|NAMESPACE)$/;

async function ensureDatabase(serverUrl: string, name: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`bad database name ${name}`);
  const c = new Client({ connectionString: serverUrl });
  await c.connect();
  try {
    const there = (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount! > 0;
    if (!there) await c.query(`CREATE DATABASE ${name}`);
  } finally {
    await c.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  const c = new Client({ connectionString: serverUrl });
  await c.connect();
  try {
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await c.end();
  }
}

async function waitReady(url: string, services: readonly string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: string;
  for (;;) {
    try {
      const r = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5_000) });
      const body = (await r.json()) as { services?: Record<string, boolean> } | null;
      last = JSON.stringify(body);
      if (r.status === 200 && services.every((s) => body?.services?.[s] === true)) return;
    } catch (err) {
      last = String(err);
    }
    if (Date.now() > deadline) throw new Error(`${url} not ready in ${timeoutMs / 1000} s: ${last}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

export async function startCluster(opts: ClusterOptions = {}): Promise<Cluster> {
  const log = opts.log ?? (() => undefined);
  const baseEnv = opts.baseEnv ?? process.env;
  const replicas = Math.max(1, opts.replicas ?? 1);
  const services = [...(opts.services ?? ALL_SERVICES)];
  const dataDir = path.resolve(opts.dataDir ?? (opts.fresh ? fs.mkdtempSync(path.join(os.tmpdir(), 'market-cluster-')) : path.join(process.cwd(), 'data', 'cluster')));
  const namespace = opts.namespace ?? (opts.fresh ? `c${base62(8)}` : (baseEnv.NAMESPACE ?? 'agent-market'));
  const serverUrl = opts.postgresUrl ?? baseEnv.DATABASE_URL ?? DEFAULT_POSTGRES_URL;
  const database = opts.database ?? (opts.fresh ? `c_${base62(12).toLowerCase()}` : CLUSTER_DATABASE);
  const rolePrefix = opts.rolePrefix ?? (opts.fresh ? `t${base62(8).toLowerCase()}_` : CLUSTER_ROLE_PREFIX);
  fs.mkdirSync(path.join(dataDir, 'credentials'), { recursive: true, mode: 0o700 });

  // Bus: one user per service, passwords only in nats-server's environment and each service's own file.
  const natsPasswords = Object.fromEntries(ALL_SERVICES.map((s) => [s, natsPassword()])) as Record<ServiceName, string>;
  const natsOpts = {
    dir: path.join(dataDir, 'nats'),
    authConf: natsAuthConfig(namespace),
    env: Object.fromEntries(ALL_SERVICES.map((s) => [passwordEnvVar(s), natsPasswords[s]])),
  };
  const natsNodes = Math.max(1, opts.natsNodes ?? 1);
  const nats = natsNodes > 1 ? await startPrivateNatsCluster(natsNodes, natsOpts) : await startPrivateNats(natsOpts);
  log(`nats-server${natsNodes > 1 ? ` cluster of ${natsNodes} (JetStream replicated)` : ''} with bus auth on ${nats.url} (store ${nats.storeDir})`);

  let adminDatabaseUrl = '';
  let roles: ServiceRole[];
  const cleanup = async () => {
    await nats.stop().catch(() => undefined);
    if (opts.fresh) {
      if (adminDatabaseUrl) await dropDatabase(serverUrl, database).catch(() => undefined);
      await dropServiceRoles(serverUrl, rolePrefix).catch(() => undefined);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  };
  try {
    adminDatabaseUrl = await ensureDatabase(serverUrl, database);
    roles = await createServiceRoles({ adminUrl: adminDatabaseUrl, prefix: rolePrefix });
  } catch (err) {
    await cleanup();
    throw err;
  }
  log(`database ${database}: roles ${roles.map((r) => r.role).join(', ')}`);

  const credentials = {} as Record<ServiceName, ServiceCredentials>;
  for (const r of roles) {
    const env = {
      TRANSPORTER: nats.url,
      NAMESPACE: namespace,
      NATS_USER: r.service,
      NATS_PASSWORD: natsPasswords[r.service],
      [`${r.service.toUpperCase()}_DATABASE_URL`]: r.url,
    };
    credentials[r.service] = { service: r.service, natsUser: r.service, natsPassword: natsPasswords[r.service], databaseUrl: r.url, env };
    const file = path.join(dataDir, 'credentials', `${r.service}.env`);
    fs.writeFileSync(file, Object.entries(env).map(([k, v]) => `${k}=${v}`).join('\n') + '\n', { mode: 0o600 });
    fs.chmodSync(file, 0o600);
  }
  const adminToken = baseEnv.ADMIN_TOKEN || randomBytes(32).toString('hex');
  // npm run audit:ledger / npm run admin find it with DATA_DIR=<dataDir> (as for a local npm start).
  fs.writeFileSync(path.join(dataDir, 'operator-token'), `${adminToken}\n`, { mode: 0o600 });

  const firstPort = opts.port ?? Number(baseEnv.PORT || 3000);
  // Every port chosen here, once: processes starting at the same instant must not pick the same free one.
  const taken = new Set<number>();
  const uniquePort = async () => {
    for (;;) {
      const p = await freePort();
      if (!taken.has(p)) {
        taken.add(p);
        return p;
      }
    }
  };
  const gatewayPorts: number[] = [];
  const count = (s: ServiceName) => Math.max(1, opts.replicasOf?.[s] ?? replicas);
  for (let i = 0; i < count('gateway'); i++) gatewayPorts.push(firstPort === 0 ? await uniquePort() : firstPort + i);
  gatewayPorts.forEach((p) => taken.add(p));
  const workerPorts = new Map<string, number>();
  for (const s of services) for (let i = 0; i < count(s); i++) if (s !== 'gateway') workerPorts.set(`${s}/${i}`, await uniquePort());
  const gateways = gatewayPorts.map((p) => `http://127.0.0.1:${p}`);
  const passThrough = Object.fromEntries(Object.entries(baseEnv).filter(([k, v]) => v !== undefined && !SCRUBBED.test(k))) as Record<string, string>;

  const envFor = (service: ServiceName, i: number): Record<string, string> => ({
    DATA_DIR: dataDir,
    ...opts.env,
    ...credentials[service].env,
    // The admin URL and the other services' secrets stay out of this process.
    DATABASE_URL: '',
    // Links the services build (the sandbox checkout) point at the first gateway.
    PUBLIC_BASE_URL: opts.env?.PUBLIC_BASE_URL ?? baseEnv.PUBLIC_BASE_URL ?? gateways[0],
    ...(service === 'gateway'
      ? { PORT: String(gatewayPorts[i]), ADMIN_TOKEN: adminToken, PUBLIC_BASE_URL: opts.env?.PUBLIC_BASE_URL ?? gateways[i] }
      : {}),
  });
  const spawnOne = (service: ServiceName, i: number) =>
    spawnServices([service], envFor(service, i), {
      startTimeoutMs: opts.startTimeoutMs ?? 180_000,
      baseEnv: passThrough,
      port: service === 'gateway' ? gatewayPorts[i] : workerPorts.get(`${service}/${i}`),
    });

  const processes = Object.fromEntries(services.map((s) => [s, [] as ServiceProcess[]])) as Record<ServiceName, ServiceProcess[]>;
  const stopAll = async () => {
    await Promise.all(Object.values(processes).flat().map((p) => p.stop().catch(() => undefined)));
  };
  try {
    // Every replica of every service at the same instant (they race on migrations and consumers).
    const results = await Promise.allSettled(
      services.flatMap((s) =>
        Array.from({ length: count(s) }, async (_, i) => {
          processes[s][i] = await spawnOne(s, i);
        }),
      ),
    );
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    if (services.includes('gateway')) {
      const others = services.filter((s) => s !== 'gateway');
      await Promise.all(gateways.map((g) => waitReady(g, others, opts.startTimeoutMs ?? 180_000)));
    }
  } catch (err) {
    await stopAll();
    await cleanup();
    throw err;
  }

  return {
    gateways,
    gatewayPorts,
    dataDir,
    namespace,
    nats,
    adminDatabaseUrl,
    adminToken,
    credentials,
    processes,
    clientEnv(service: ServiceName = 'gateway') {
      return { ...credentials[service].env, DATA_DIR: dataDir };
    },
    async kill(service, i) {
      await processes[service][i]?.kill();
    },
    async restart(service, i) {
      await processes[service][i]?.stop();
      const p = await spawnOne(service, i);
      processes[service][i] = p;
      return p;
    },
    async stop() {
      await stopAll();
      await cleanup();
    },
  };
}
