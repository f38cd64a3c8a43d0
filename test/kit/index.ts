/**
 * Test harness: the real app on a random port, over HTTP, against real storage —
 * PGlite in memory by default, or a fresh database on the real PostgreSQL of TEST_DATABASE_URL —
 * and, for distributed suites, services as separate OS processes over real NATS.
 * Nothing here mocks the database or the bus.
 */
import path from 'node:path';
import type { Middleware, ServiceBroker } from 'moleculer';
import { createBroker } from '../../packages/broker';
import type { Cluster } from '../../packages/cluster';
import { loadConfig, type Config, type ServiceName } from '../../packages/config';
import { ManualClock, type Clock } from '../../packages/runtime';
import { createMarketplace, gatewayPort } from '../../src/app';

import { createTestDatabase, TEST_DATABASE_URL, type TestDatabase } from './database';
import { natsServerAvailable } from '../../packages/cluster/nats-server';

export { createTestDatabase, TEST_DATABASE_URL, type TestDatabase };
export { dockerEngine, startNatsContainer, startPostgresContainer, type NatsContainer, type PostgresContainer } from './containers';
export { natsServerAvailable, startPrivateNats, type PrivateNats } from '../../packages/cluster/nats-server';
export const TEST_NATS_URL = process.env.TEST_NATS_URL || null;
export const REPO_ROOT = path.resolve(__dirname, '../..');

/**
 * describe.skip that says why in the suite's title. The reason comes from jest-global-setup
 * (no URLs and no Docker engine), or names the missing variable when that setup did not run.
 */
function describeSkipping(missing: string, why = process.env.TEST_SKIP_REASON): jest.Describe {
  const reason = why || `${missing} not set`;
  const skipped = (name: number | string | jest.FunctionLike, fn?: jest.EmptyFunction) => describe.skip(`${String(name)} [skipped: ${reason}]`, fn ?? (() => undefined));
  return Object.assign(skipped, describe.skip) as jest.Describe;
}

/**
 * describe() that runs only with a real PostgreSQL: TEST_DATABASE_URL, or the container
 * jest-global-setup started when a Docker engine is reachable.
 */
export const describeWithPostgres: jest.Describe = TEST_DATABASE_URL ? describe : describeSkipping('TEST_DATABASE_URL');
/** describe() that runs only when a Docker engine answers (for suites that start containers of their own). */
export const describeWithDocker: jest.Describe = process.env.TEST_DOCKER === '1' ? describe : describeSkipping('a Docker engine', process.env.TEST_DOCKER_SKIP_REASON);
/** describe() for suites that start a cluster (packages/cluster): real PostgreSQL and a nats-server binary of their own. */
export const describeCluster: jest.Describe = !natsServerAvailable()
  ? describeSkipping('a nats-server binary (NATS_SERVER_BIN)', 'no nats-server binary (NATS_SERVER_BIN)')
  : describeWithPostgres;
/** describe() that runs only with real PostgreSQL and NATS (URLs, or containers as above). */
export const describeDistributed: jest.Describe =
  TEST_DATABASE_URL && TEST_NATS_URL ? describe : describeSkipping([!TEST_DATABASE_URL && 'TEST_DATABASE_URL', !TEST_NATS_URL && 'TEST_NATS_URL'].filter(Boolean).join(' and '));

export interface ToolResponse<T = any> {
  status: number;
  body: { ok: boolean; result?: T; error?: { code: string; message: string; hint?: string; details?: any }; requestId?: string };
  headers: Headers;
}

export class ApiClient {
  constructor(public readonly baseUrl: string) {}

  async call<T = any>(tool: string, args: Record<string, unknown> = {}, apiKey?: string | null, headers: Record<string, string> = {}): Promise<ToolResponse<T>> {
    const res = await fetch(`${this.baseUrl}/api/agent`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
        ...headers,
      },
      body: JSON.stringify({ tool, arguments: args }),
    });
    return { status: res.status, body: (await res.json()) as any, headers: res.headers };
  }

  /** Calls a tool and returns its result, failing the test with the envelope when it is not ok. */
  async ok<T = any>(tool: string, args: Record<string, unknown> = {}, apiKey?: string | null, headers: Record<string, string> = {}): Promise<T> {
    const r = await this.call<T>(tool, args, apiKey, headers);
    if (r.status !== 200 || !r.body.ok) throw new Error(`${tool} failed: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.result as T;
  }

  async register(displayName = 'Test Agent', extra: Record<string, unknown> = {}): Promise<{ apiKey: string; agent: any }> {
    const res = await fetch(`${this.baseUrl}/api/agent/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ provider: 'claude_code', displayName, ...extra }),
    });
    const body = (await res.json()) as any;
    if (res.status !== 200) throw new Error(`register failed: ${res.status} ${JSON.stringify(body)}`);
    return { apiKey: body.apiKey, agent: body.agent };
  }

  async get(pathname: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any; text: string; headers: Headers }> {
    const res = await fetch(`${this.baseUrl}${pathname}`, { headers });
    const text = await res.text();
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      body = null;
    }
    return { status: res.status, body, text, headers: res.headers };
  }
}

export interface TestApp {
  broker: ServiceBroker;
  config: Config;
  clock: ManualClock;
  baseUrl: string;
  api: ApiClient;
  /** Calls an action directly (as an internal caller would). */
  call<T = any>(action: string, params?: Record<string, unknown>, meta?: Record<string, unknown>): Promise<T>;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Extra environment for loadConfig (e.g. { STRIPE_SECRET_KEY: … }). */
  env?: Record<string, string>;
  /** Run on a fresh database of TEST_DATABASE_URL instead of in-memory PGlite. */
  postgres?: boolean;
  clock?: Clock;
  /** Extra Moleculer middlewares for the test broker (e.g. a call-graph recorder). */
  middlewares?: Middleware[];
}

/** The whole marketplace in this process on a random port (in-process bus), like `npm start`. */
export async function startTestApp(opts: StartOptions = {}): Promise<TestApp> {
  let testDb: TestDatabase | null = null;
  if (opts.postgres) testDb = await createTestDatabase();
  const config = loadConfig({
    NODE_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: 'memory://',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'error',
    SWEEP_INTERVAL_MS: '0',
    SEED_ON_EMPTY: 'false',
    RATE_LIMIT_PER_MINUTE: '0',
    ...(testDb ? { DATABASE_URL: testDb.url } : {}),
    ...opts.env,
  });
  const clock = (opts.clock as ManualClock) ?? new ManualClock();
  const broker = createMarketplace(config, { clock, brokerOptions: opts.middlewares ? { middlewares: opts.middlewares } : undefined });
  await broker.start();
  const port = gatewayPort(broker);
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    broker,
    config,
    clock,
    baseUrl,
    api: new ApiClient(baseUrl),
    call: (action, params = {}, meta = {}) => broker.call(action, params, { meta }) as any,
    async stop() {
      await broker.stop();
      await testDb?.drop();
    },
  };
}

export { spawnServices, startCluster, type Cluster, type ClusterOptions, type ServiceProcess } from '../../packages/cluster';

/**
 * A broker of the test's own with one service's bus credentials on a cluster (packages/cluster): it may call
 * only that service's row of the call table (payments' credits gas, escrow's holds, the gateway's reads and
 * audits). Started, and waiting for `waitFor`; stop it after.
 */
export async function clusterBroker(cluster: Cluster, service: ServiceName, waitFor: string[] = []): Promise<ServiceBroker> {
  const config = loadConfig({ ...cluster.clientEnv(service), DATA_DIR: 'memory://', LOG_LEVEL: 'error', NODE_ENV: 'test' });
  const broker = createBroker({ config, services: [] });
  await broker.start();
  if (waitFor.length) await broker.waitForServices(waitFor, 30_000);
  return broker;
}

/** Polls until fn returns a truthy value (or throws after timeoutMs). For eventually-consistent reads. */
export async function eventually<T>(fn: () => Promise<T | null | undefined | false>, timeoutMs = 10_000, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`condition not met in ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Waits until the gateway behind `api` has discovered the named services (each node discovers others on its own). */
export async function waitForGateway(api: ApiClient, services: string[], timeoutMs = 30_000): Promise<void> {
  await eventually(async () => {
    const r = await api.get('/readyz');
    return r.body?.services && services.every((s) => r.body.services[s] === true);
  }, timeoutMs, 100);
}

export { freePort } from '../../packages/cluster';
