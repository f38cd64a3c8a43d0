/**
 * All configuration comes from the environment, read and validated here once.
 * Defaults make `npm start` work on a bare machine (PGlite, in-process bus, sandbox checkout).
 */
import path from 'node:path';
import { DEFAULT_AUTO_RELEASE_DAYS, DEFAULT_PLATFORM_FEE_PERCENT, MAX_PLATFORM_FEE_PERCENT } from '../market-rules';

export const ALL_SERVICES = ['gateway', 'agents', 'listings', 'escrow', 'ledger', 'payments', 'support', 'notifications'] as const;
export type ServiceName = (typeof ALL_SERVICES)[number];

export interface Config {
  nodeEnv: string;
  port: number;
  host: string;
  publicBaseUrl: string;
  /** Unset: every service in one process on the in-process bus. */
  transporter: string | null;
  /** Moleculer namespace; also prefixes durable channel (JetStream stream) names. */
  namespace: string;
  /** Unset: PGlite persisted in dataDir ("memory://" keeps it in memory, for tests). */
  databaseUrl: string | null;
  dataDir: string;
  services: ServiceName[];
  nodeId: string | null;
  requestTimeoutMs: number;
  stripeSecretKey: string | null;
  stripeWebhookSecret: string | null;
  /** For the local Stripe stand-in in tests: host/port/protocol the SDK talks to. */
  stripeApiBase: string | null;
  adminToken: string | null;
  /** Shown on the checkout and terms pages (OPERATOR_CONTACT: an e-mail address or URL); null = not published. */
  operatorContact: string | null;
  autoReleaseDays: number;
  /** The platform's share of a sale, fixed on each purchase when it is bought (PLATFORM_FEE_PERCENT, 0–50). */
  platformFeePercent: number;
  rateLimitPerMinute: number;
  authCacheTtlMs: number;
  btcNetwork: 'mainnet' | 'testnet';
  seedOnEmpty: boolean;
  helpLlmUrl: string | null;
  helpLlmKey: string | null;
  helpLlmModel: string;
  logLevel: string;
  /** Sweepers (auto-release, reconciliation, outbox relay) poll at this interval; 0 disables the timers. */
  sweepIntervalMs: number;
  /** /mcp DNS-rebinding guard: extra Host names accepted besides localhost and PUBLIC_BASE_URL's host (ALLOWED_HOSTS). */
  allowedHosts: string[];
  /** /mcp: extra browser Origins accepted (ALLOWED_ORIGINS, full origins like https://app.example; "*" = any). */
  allowedOrigins: string[];
  /** Webhooks may target plain http and private/loopback addresses (WEBHOOK_ALLOW_PRIVATE; development and tests only). */
  webhookAllowPrivate: boolean;
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
  const btcNetwork = (str(env, 'BTC_NETWORK') ?? 'mainnet') as Config['btcNetwork'];
  if (!['mainnet', 'testnet'].includes(btcNetwork)) throw new ConfigError('BTC_NETWORK must be mainnet or testnet');
  if (btcNetwork === 'testnet' && nodeEnv === 'production') throw new ConfigError('BTC_NETWORK=testnet is refused when NODE_ENV=production');
  const webhookAllowPrivate = bool(env, 'WEBHOOK_ALLOW_PRIVATE', false);
  if (webhookAllowPrivate && nodeEnv === 'production') throw new ConfigError('WEBHOOK_ALLOW_PRIVATE=true is refused when NODE_ENV=production');
  const publicBaseUrl = (str(env, 'PUBLIC_BASE_URL') ?? `http://localhost:${port}`).replace(/\/+$/, '');

  return {
    nodeEnv,
    port,
    host,
    publicBaseUrl,
    transporter,
    namespace: str(env, 'NAMESPACE') ?? 'agent-market',
    databaseUrl: str(env, 'DATABASE_URL'),
    dataDir: str(env, 'DATA_DIR') ?? path.resolve(process.cwd(), 'data'),
    services: services as ServiceName[],
    nodeId: str(env, 'NODE_ID'),
    requestTimeoutMs: int(env, 'REQUEST_TIMEOUT_MS', 15000, 100),
    stripeSecretKey,
    stripeWebhookSecret,
    stripeApiBase: str(env, 'STRIPE_API_BASE'),
    adminToken: str(env, 'ADMIN_TOKEN'),
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
    sweepIntervalMs: int(env, 'SWEEP_INTERVAL_MS', 30000, 0),
    allowedHosts: (str(env, 'ALLOWED_HOSTS') ?? '').split(',').map((h) => h.trim().toLowerCase()).filter(Boolean),
    allowedOrigins: (str(env, 'ALLOWED_ORIGINS') ?? '').split(',').map((o) => o.trim().replace(/\/+$/, '')).filter(Boolean),
    webhookAllowPrivate,
  };
}

/** For entry points: the config, or a one-line message and exit code 2 when the environment is wrong. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`Configuration error: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
}
