/**
 * Once per `jest` run: where the PostgreSQL/NATS suites get their servers.
 * 1. TEST_DATABASE_URL / TEST_NATS_URL set → those (as before).
 * 2. else a reachable Docker engine → one PostgreSQL and one NATS (JetStream) container for the run,
 *    exported as TEST_DATABASE_URL / TEST_NATS_URL to every worker (each suite still makes its own
 *    database and Moleculer namespace); jest-global-teardown stops them.
 * 3. else those suites skip, and TEST_SKIP_REASON says why (printed here and in each skipped title).
 * TEST_CONTAINERS=off skips step 2. TEST_DOCKER=1 tells suites that start containers of their own that an engine answers.
 */
import {
  dockerEngine,
  startNatsContainer,
  startPostgresContainer,
  TEST_NATS_IMAGE,
  TEST_POSTGRES_IMAGE,
  type NatsContainer,
  type PostgresContainer,
} from './containers';

export interface StartedServers {
  postgres?: PostgresContainer;
  nats?: NatsContainer;
}

declare global {
  var __testServers: StartedServers | undefined;
}

export default async function globalSetup(): Promise<void> {
  const engine = process.env.TEST_CONTAINERS === 'off' ? ({ ok: false, reason: 'TEST_CONTAINERS=off' } as const) : await dockerEngine();
  // For suites that need containers of their own (describeWithDocker), whatever the URLs say.
  process.env.TEST_DOCKER = engine.ok ? '1' : '';
  process.env.TEST_DOCKER_SKIP_REASON = engine.ok ? '' : engine.reason;
  const needPg = !process.env.TEST_DATABASE_URL;
  const needNats = !process.env.TEST_NATS_URL;
  if (!needPg && !needNats) return;
  const missing = [needPg && 'TEST_DATABASE_URL', needNats && 'TEST_NATS_URL'].filter(Boolean).join(' and ');
  if (!engine.ok) {
    skip(`${missing} not set and ${engine.reason}`);
    return;
  }
  const started = Date.now();
  const servers: StartedServers = {};
  globalThis.__testServers = servers;
  const [pg, nats] = await Promise.all([needPg ? startPostgresContainer() : undefined, needNats ? startNatsContainer() : undefined]).catch((err: Error) => {
    throw new Error(
      `${err.message}\n[testkit] A Docker engine answered but the PostgreSQL/NATS containers did not start. Without a registry, build local ` +
        `images (scripts/containers/build-local-images.sh) and set TEST_POSTGRES_IMAGE / TEST_NATS_IMAGE; or set TEST_CONTAINERS=off.`,
    );
  });
  if (pg) {
    servers.postgres = pg;
    process.env.TEST_DATABASE_URL = pg.url;
  }
  if (nats) {
    servers.nats = nats;
    process.env.TEST_NATS_URL = nats.url;
  }
  process.env.TEST_SERVERS_FROM = 'containers';
  const what = [pg && `PostgreSQL ${pg.container.getName()} (${TEST_POSTGRES_IMAGE})`, nats && `NATS ${nats.container.getName()} (${TEST_NATS_IMAGE})`]
    .filter(Boolean)
    .join(' and ');
  process.stderr.write(`\n[testkit] ${what} started through testcontainers on ${engine.host} in ${Date.now() - started} ms\n`);
}

function skip(reason: string): void {
  process.env.TEST_SKIP_REASON = reason;
  process.stderr.write(`\n[testkit] suites needing PostgreSQL/NATS will skip: ${reason}\n`);
}
