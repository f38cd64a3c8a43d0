/**
 * All configuration comes from the environment, read and validated here once.
 * Defaults make `npm start` work on a bare machine (PGlite, in-process bus, sandbox checkout).
 */
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_AUTO_RELEASE_DAYS, DEFAULT_PLATFORM_FEE_PERCENT, MAX_PLATFORM_FEE_PERCENT } from '../market-rules';

export const ALL_SERVICES = ['gateway', 'agents', 'listings', 'escrow', 'ledger', 'payments', 'support', 'notifications'] as const;
export type ServiceName = (typeof ALL_SERVICES)[number];

export interface Config {
  /** `production` refuses the sandbox checkout, testnet payouts and WEBHOOK_ALLOW_PRIVATE, and needs a 32-character ADMIN_TOKEN. @default development */
  nodeEnv: string;
  /** HTTP port of the process: the gateway, or /healthz, /readyz and /metrics for a process without it. */
  port: number;
  /** The interface PORT binds. */
  host: string;
  /** The address agents and people use (checkout URLs, llms.txt, OpenAPI); its host is accepted by /mcp. @default http://localhost:$PORT */
  publicBaseUrl: string;
  /** `nats://host:4222`: services talk over NATS, durable events over JetStream. Unset: every service in one process on the in-process bus. @default unset = in-process bus */
  transporter: string | null;
  /** Moleculer namespace; also prefixes durable channel (JetStream stream) names. */
  namespace: string;
  /** PostgreSQL connection string; each service uses its own schema. Required with TRANSPORTER. Unset: PGlite persisted in DATA_DIR ("memory://" keeps it in memory, for tests). @default unset = PGlite */
  databaseUrl: string | null;
  /**
   * <SERVICE>_DATABASE_URL (GATEWAY_DATABASE_URL, LEDGER_DATABASE_URL, …): a service's own URL (its own
   * role from `npm run db:roles`, or its own PostgreSQL cluster); a service without one uses DATABASE_URL. See databaseUrlFor().
   * @default unset = DATABASE_URL
   */
  serviceDatabaseUrls: Partial<Record<ServiceName, string>>;
  /**
   * JETSTREAM_REPLICAS: copies of the durable-event streams (1–5; consumers follow their stream). Unset: 3 when the
   * JetStream cluster has 3 or more servers, else 1. The ledger raises streams created smaller (ADR 0036).
   * @default unset = 3 on a JetStream cluster of ≥ 3 servers, else 1
   */
  jetstreamReplicas: number | null;
  /** OUTBOX_ALERT_SECONDS: an unpublished outbox row older than this marks /readyz `degraded` (settlement is lagging). */
  outboxAlertSeconds: number;
  /** NATS_USER: this process's bus user, its service's name in deploy/nats/auth.conf (`npm run bus:config`). Unset: no bus authentication. */
  natsUser: string | null;
  /** NATS_PASSWORD, or NATS_PASSWORD_FILE (a file holding it): the bus user's password; goes with NATS_USER. */
  natsPassword: string | null;
  /**
   * BUS_VERSION_CHECK: refuse bus packets of another Moleculer protocol version (0.15 speaks v5, 0.14 v4). Set false
   * only while rolling an existing 0.14 deployment onto this release (docs/operations.md, "Upgrading from moleculer 0.14").
   */
  busVersionCheck: boolean;
  /** Where PGlite keeps its files (and the local operator token). @default ./data */
  dataDir: string;
  /** Connections per process in the PostgreSQL pool (DATABASE_POOL_MAX); size it as replicas × this ≤ max_connections. */
  databasePoolMax: number;
  /** Opening a PostgreSQL connection, or waiting for a free one in a full pool, fails as 503 after this many ms; short of the bus's request timeout. */
  databaseConnectTimeoutMs: number;
  /** PostgreSQL statement_timeout of every connection, in ms: a longer statement is cancelled (503); migrations are exempt. */
  databaseStatementTimeoutMs: number;
  /** Client-side limit on waiting for a query's answer, in ms (a frozen server or a dead path); above the statement timeout, below the request timeout. */
  databaseQueryTimeoutMs: number;
  /** PostgreSQL idle_in_transaction_session_timeout, in ms: a session idle inside a transaction (its process frozen) is ended and its locks released. */
  databaseIdleInTransactionTimeoutMs: number;
  /** TCP keep-alive on PostgreSQL sockets: probes start after this many ms of silence, so a vanished server's connections fail instead of hanging. */
  databaseKeepAliveInitialDelayMs: number;
  /** Comma list of the services this process runs (gateway, agents, listings, escrow, ledger, payments, support, notifications); a subset needs TRANSPORTER. @default all */
  services: ServiceName[];
  /** Moleculer node id; unset = `<services>.<host>-<pid>-<random>`, unique per process start. */
  nodeId: string | null;
  /** Moleculer request timeout between services, in ms. */
  requestTimeoutMs: number;
  /** Moleculer heartbeat interval in seconds: a node silent for HEARTBEAT_TIMEOUT_S is dropped and its pending calls fail over. */
  heartbeatIntervalS: number;
  /** Seconds without a heartbeat before a node is dropped (greater than HEARTBEAT_INTERVAL_S). */
  heartbeatTimeoutS: number;
  /** Turns on Stripe Checkout instead of the sandbox checkout (required with NODE_ENV=production). */
  stripeSecretKey: string | null;
  /** The Stripe webhook endpoint's signing secret (`whsec_…`); webhooks are verified over the raw body. */
  stripeWebhookSecret: string | null;
  /** Another Stripe API address (the tests' local stand-in, test/kit/stripe-standin.ts). */
  stripeApiBase: string | null;
  /** Bearer token of /api/admin/*, the operator CLIs and the /admin console sign-in; at least 32 characters when NODE_ENV=production. @default unset = admin API off */
  adminToken: string | null;
  /** Shown on the checkout and terms pages (OPERATOR_CONTACT: an e-mail address or URL); null = not published. */
  operatorContact: string | null;
  /** Days after delivery before escrow releases a purchase on its own. */
  autoReleaseDays: number;
  /** The platform's share of a sale, fixed on each purchase when it is bought (PLATFORM_FEE_PERCENT, 0–50). */
  platformFeePercent: number;
  /** Tool calls per agent (or per IP without a key) per minute, counted across gateway replicas; 0 = off. */
  rateLimitPerMinute: number;
  /** How long the gateway caches a resolved API key, in ms (a revoked key stops working within it). */
  authCacheTtlMs: number;
  /** Payout address network, mainnet or testnet; testnet is refused when NODE_ENV=production. */
  btcNetwork: 'mainnet' | 'testnet';
  /** Seed a few honest listings on the first start of an empty embedded (PGlite) database; never with DATABASE_URL. */
  seedOnEmpty: boolean;
  /** Optional OpenAI-compatible endpoint that phrases ask_help answers from the grounded facts and passages only, choosing the next call among the allowed ones (structured output). */
  helpLlmUrl: string | null;
  /** The API key for HELP_LLM_URL. */
  helpLlmKey: string | null;
  /** The model asked at HELP_LLM_URL. */
  helpLlmModel: string;
  /** pino log level (`debug`: one line per action and durable event handled, with requestId). */
  logLevel: string;
  /**
   * `pretty`: one readable line per entry (time, level, module, message) and the startup banner first, with
   * Moleculer's own start-up chatter only at LOG_LEVEL=debug; `json`: pino's JSON lines and a JSON startup line.
   * @default pretty at a terminal, else json
   */
  logFormat: 'pretty' | 'json';
  /** Sweepers (auto-release, reconciliation, outbox relay) poll at this interval in ms; 0 disables the timers. */
  sweepIntervalMs: number;
  /** /mcp DNS-rebinding guard: extra Host names accepted besides localhost and PUBLIC_BASE_URL's host (ALLOWED_HOSTS). @default empty */
  allowedHosts: string[];
  /** /mcp: extra browser Origins accepted (ALLOWED_ORIGINS, full origins like https://app.example; "*" = every origin). @default empty */
  allowedOrigins: string[];
  /**
   * TRUST_PROXY: whether X-Forwarded-For names the client (express "trust proxy"). false (default): the
   * TCP peer is the client. A hop count, or a list of proxy addresses/subnets ("loopback", "10.0.0.0/8").
   * @default off
   */
  trustProxy: boolean | number | string[];
  /** METRICS_TOKEN: GET /metrics on the gateway port answers only "Authorization: Bearer <token>" (unset = off there); a worker's /metrics needs it when set. @default unset = off */
  metricsToken: string | null;
  /** METRICS_PORT: an internal Prometheus listener (no token) bound to METRICS_HOST; unset = none. */
  metricsPort: number | null;
  /** METRICS_HOST: the address that listener binds (default 127.0.0.1, loopback only). */
  metricsHost: string;
  /** Failed admin-token, API-key or metrics-token authentications per client and minute before 429 (AUTH_FAILURES_PER_MINUTE); a valid credential always passes. */
  authFailuresPerMinute: number;
  /** Webhooks may target plain http and private/loopback addresses (WEBHOOK_ALLOW_PRIVATE; development and tests only, refused in production). */
  webhookAllowPrivate: boolean;
}

/** In production ADMIN_TOKEN must be at least this long (a guessable token is an open door to the money). */
export const MIN_ADMIN_TOKEN_LENGTH = 32;

const PROXY_ENTRY = /^(loopback|linklocal|uniquelocal|[0-9.]+(\/\d{1,2})?|[0-9a-fA-F:.]+(\/\d{1,3})?)$/;

function trustProxyOf(env: NodeJS.ProcessEnv): Config['trustProxy'] {
  const raw = str(env, 'TRUST_PROXY');
  if (raw === null || ['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
  if (['true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  const entries = raw.split(',').map((e) => e.trim()).filter(Boolean);
  for (const e of entries) {
    if (!PROXY_ENTRY.test(e)) {
      throw new ConfigError(`TRUST_PROXY entry "${e}" is not an address, a subnet, loopback, linklocal or uniquelocal (or use off, true, or a hop count)`);
    }
  }
  return entries;
}

export class ConfigError extends Error {}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
  return value;
}

function percent(env: NodeJS.ProcessEnv, name: string, fallback: number, max: number): number {
  const value = int(env, name, fallback, 0);
  if (value > max) throw new ConfigError(`${name} must be an integer between 0 and ${max}, got "${env[name]}"`);
  return value;
}

function str(env: NodeJS.ProcessEnv, name: string): string | null {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? null : raw.trim();
}

function bool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = str(env, name);
  if (raw === null) return fallback;
  return !['0', 'false', 'no', 'off'].includes(raw.toLowerCase());
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const nodeEnv = str(env, 'NODE_ENV') ?? 'development';
  const port = int(env, 'PORT', 3000);
  const host = str(env, 'HOST') ?? '0.0.0.0';
  const servicesRaw = str(env, 'SERVICES');
  const services = servicesRaw
    ? servicesRaw.split(',').map((s) => s.trim()).filter(Boolean)
    : [...ALL_SERVICES];
  for (const s of services) {
    if (!(ALL_SERVICES as readonly string[]).includes(s)) {
      throw new ConfigError(`SERVICES contains unknown service "${s}"; known: ${ALL_SERVICES.join(', ')}`);
    }
  }
  const transporter = str(env, 'TRANSPORTER');
  if (servicesRaw && !transporter && services.length < ALL_SERVICES.length) {
    throw new ConfigError('SERVICES selects a subset of services, which only makes sense with TRANSPORTER=nats://… set');
  }
  const stripeSecretKey = str(env, 'STRIPE_SECRET_KEY');
  const stripeWebhookSecret = str(env, 'STRIPE_WEBHOOK_SECRET');
  if (nodeEnv === 'production' && (!stripeSecretKey || !stripeWebhookSecret) && services.includes('payments')) {
    throw new ConfigError('NODE_ENV=production needs STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET: the sandbox checkout is for development only');
  }
  const logFormat = (str(env, 'LOG_FORMAT') ?? (process.stdout.isTTY ? 'pretty' : 'json')) as Config['logFormat'];
  if (!['pretty', 'json'].includes(logFormat)) throw new ConfigError('LOG_FORMAT must be pretty or json');
  const btcNetwork = (str(env, 'BTC_NETWORK') ?? 'mainnet') as Config['btcNetwork'];
  if (!['mainnet', 'testnet'].includes(btcNetwork)) throw new ConfigError('BTC_NETWORK must be mainnet or testnet');
  if (btcNetwork === 'testnet' && nodeEnv === 'production') throw new ConfigError('BTC_NETWORK=testnet is refused when NODE_ENV=production');
  const databasePoolMax = int(env, 'DATABASE_POOL_MAX', 10, 1);
  const heartbeatIntervalS = int(env, 'HEARTBEAT_INTERVAL_S', 1, 1);
  const heartbeatTimeoutS = int(env, 'HEARTBEAT_TIMEOUT_S', 3, 2);
  if (heartbeatTimeoutS <= heartbeatIntervalS) {
    throw new ConfigError(`HEARTBEAT_TIMEOUT_S (${heartbeatTimeoutS}) must be greater than HEARTBEAT_INTERVAL_S (${heartbeatIntervalS})`);
  }
  const webhookAllowPrivate = bool(env, 'WEBHOOK_ALLOW_PRIVATE', false);
  if (webhookAllowPrivate && nodeEnv === 'production') throw new ConfigError('WEBHOOK_ALLOW_PRIVATE=true is refused when NODE_ENV=production');
  const publicBaseUrl = (str(env, 'PUBLIC_BASE_URL') ?? `http://localhost:${port}`).replace(/\/+$/, '');
  const adminToken = str(env, 'ADMIN_TOKEN');
  if (nodeEnv === 'production' && adminToken !== null && adminToken.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw new ConfigError(
      `ADMIN_TOKEN must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters when NODE_ENV=production (got ${adminToken.length}); generate one with: openssl rand -hex 32`,
    );
  }
  const metricsPortRaw = str(env, 'METRICS_PORT');
  const serviceDatabaseUrls: Partial<Record<ServiceName, string>> = {};
  for (const s of ALL_SERVICES) {
    const url = str(env, `${s.toUpperCase()}_DATABASE_URL`);
    if (url) serviceDatabaseUrls[s] = url;
  }
  const jetstreamReplicasRaw = str(env, 'JETSTREAM_REPLICAS');
  const jetstreamReplicas = jetstreamReplicasRaw === null ? null : int(env, 'JETSTREAM_REPLICAS', 1, 1);
  if (jetstreamReplicas !== null && jetstreamReplicas > 5) throw new ConfigError(`JETSTREAM_REPLICAS must be 1 to 5 (JetStream's limit), got ${jetstreamReplicas}`);
  const natsUser = str(env, 'NATS_USER');
  let natsPassword = str(env, 'NATS_PASSWORD');
  const natsPasswordFile = str(env, 'NATS_PASSWORD_FILE');
  if (!natsPassword && natsPasswordFile) {
    try {
      natsPassword = fs.readFileSync(natsPasswordFile, 'utf8').trim() || null;
    } catch (err) {
      throw new ConfigError(`NATS_PASSWORD_FILE ${natsPasswordFile} cannot be read: ${(err as Error).message}`);
    }
  }
  if (natsUser && !/^[a-z][a-z0-9_-]*$/.test(natsUser)) throw new ConfigError(`NATS_USER must be a service name such as "ledger", got "${natsUser}"`);
  if ((natsUser === null) !== (natsPassword === null)) {
    throw new ConfigError('NATS_USER and NATS_PASSWORD (or NATS_PASSWORD_FILE) go together: set both, or neither for a NATS without authentication');
  }

  return {
    nodeEnv,
    port,
    host,
    publicBaseUrl,
    transporter,
    namespace: str(env, 'NAMESPACE') ?? 'agent-market',
    databaseUrl: str(env, 'DATABASE_URL'),
    serviceDatabaseUrls,
    natsUser,
    natsPassword,
    busVersionCheck: bool(env, 'BUS_VERSION_CHECK', true),
    jetstreamReplicas,
    outboxAlertSeconds: int(env, 'OUTBOX_ALERT_SECONDS', 30, 1),
    dataDir: str(env, 'DATA_DIR') ?? path.resolve(process.cwd(), 'data'),
    databasePoolMax,
    // Sized for a managed PostgreSQL whose failover takes ~30 s: each wait fails well inside the 15 s request
    // timeout, so the caller gets a 503 with Retry-After (and retries with its key) instead of a bus timeout.
    databaseConnectTimeoutMs: int(env, 'DATABASE_CONNECT_TIMEOUT_MS', 5000, 1),
    databaseStatementTimeoutMs: int(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 10000, 1),
    databaseQueryTimeoutMs: int(env, 'DATABASE_QUERY_TIMEOUT_MS', 12000, 1),
    databaseIdleInTransactionTimeoutMs: int(env, 'DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS', 5000, 1),
    databaseKeepAliveInitialDelayMs: int(env, 'DATABASE_KEEPALIVE_INITIAL_DELAY_MS', 10000, 1),
    services: services as ServiceName[],
    nodeId: str(env, 'NODE_ID'),
    requestTimeoutMs: int(env, 'REQUEST_TIMEOUT_MS', 15000, 100),
    heartbeatIntervalS,
    heartbeatTimeoutS,
    stripeSecretKey,
    stripeWebhookSecret,
    stripeApiBase: str(env, 'STRIPE_API_BASE'),
    adminToken,
    operatorContact: str(env, 'OPERATOR_CONTACT'),
    autoReleaseDays: int(env, 'AUTO_RELEASE_DAYS', DEFAULT_AUTO_RELEASE_DAYS, 0),
    platformFeePercent: percent(env, 'PLATFORM_FEE_PERCENT', DEFAULT_PLATFORM_FEE_PERCENT, MAX_PLATFORM_FEE_PERCENT),
    rateLimitPerMinute: int(env, 'RATE_LIMIT_PER_MINUTE', 600, 0),
    authCacheTtlMs: int(env, 'AUTH_CACHE_TTL_MS', 5000, 0),
    btcNetwork,
    seedOnEmpty: bool(env, 'SEED_ON_EMPTY', true),
    helpLlmUrl: str(env, 'HELP_LLM_URL'),
    helpLlmKey: str(env, 'HELP_LLM_KEY'),
    helpLlmModel: str(env, 'HELP_LLM_MODEL') ?? 'gpt-4o-mini',
    logLevel: str(env, 'LOG_LEVEL') ?? 'info',
    logFormat,
    sweepIntervalMs: int(env, 'SWEEP_INTERVAL_MS', 30000, 0),
    allowedHosts: (str(env, 'ALLOWED_HOSTS') ?? '').split(',').map((h) => h.trim().toLowerCase()).filter(Boolean),
    allowedOrigins: (str(env, 'ALLOWED_ORIGINS') ?? '').split(',').map((o) => o.trim().replace(/\/+$/, '')).filter(Boolean),
    trustProxy: trustProxyOf(env),
    metricsToken: str(env, 'METRICS_TOKEN'),
    metricsPort: metricsPortRaw === null ? null : int(env, 'METRICS_PORT', 0, 1),
    metricsHost: str(env, 'METRICS_HOST') ?? '127.0.0.1',
    authFailuresPerMinute: int(env, 'AUTH_FAILURES_PER_MINUTE', 10, 1),
    webhookAllowPrivate,
  };
}

/**
 * Checks for a process that runs services (not for clients such as the audit CLI, which only call
 * over the bus): with TRANSPORTER set every process must share one PostgreSQL; falling back to a
 * PGlite per process would silently split the data.
 */
export function assertRunnable(config: Config): void {
  if (config.transporter && config.services.some((s) => !databaseUrlFor(config, s))) {
    throw new ConfigError(
      'TRANSPORTER is set but DATABASE_URL is not: distributed processes must share one PostgreSQL (set DATABASE_URL=postgres://…), ' +
        'or unset TRANSPORTER to run everything in one process on embedded PGlite',
    );
  }
}

/** The PostgreSQL URL a service uses: its own <SERVICE>_DATABASE_URL, else DATABASE_URL (null: PGlite). */
export function databaseUrlFor(config: Pick<Config, 'databaseUrl' | 'serviceDatabaseUrls'>, service: string): string | null {
  return config.serviceDatabaseUrls?.[service as ServiceName] ?? config.databaseUrl;
}

/** For entry points: the config, or a one-line message and exit code 2 when the environment is wrong. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    const config = loadConfig(env);
    assertRunnable(config);
    return config;
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`Configuration error: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
}
