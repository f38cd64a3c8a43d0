/**
 * PostgreSQL and NATS (JetStream) for the integration suites, in containers started through
 * testcontainers, when TEST_DATABASE_URL / TEST_NATS_URL are not set and a Docker engine is reachable.
 * Images: TEST_POSTGRES_IMAGE / TEST_NATS_IMAGE (default the official images; CI passes the local
 * Debian-built ones from scripts/containers/build-local-images.sh, since no registry is reachable there).
 */
import { Client } from 'pg';
import type { StartedTestContainer } from 'testcontainers';

export const TEST_POSTGRES_IMAGE = process.env.TEST_POSTGRES_IMAGE || 'postgres:16';
export const TEST_NATS_IMAGE = process.env.TEST_NATS_IMAGE || 'nats:2.10';

/**
 * Defaults that make testcontainers work against a local engine on a machine without a registry:
 * Ryuk (the reaper) is an image to pull, so it is off — every container here is stopped by its owner
 * (globalTeardown or the suite) — and a local engine publishes ports on 127.0.0.1 even when the host
 * itself looks like a container to testcontainers. Explicit settings win.
 */
function applyTestcontainersDefaults(): void {
  process.env.TESTCONTAINERS_RYUK_DISABLED ??= 'true';
  const dockerHost = process.env.DOCKER_HOST ?? '';
  if (!dockerHost || dockerHost.startsWith('unix://')) process.env.TESTCONTAINERS_HOST_OVERRIDE ??= '127.0.0.1';
}

async function testcontainers(): Promise<typeof import('testcontainers')> {
  applyTestcontainersDefaults();
  return import('testcontainers');
}

/** Whether a Docker engine answers (DOCKER_HOST, else the usual places); the reason when not. */
export async function dockerEngine(timeoutMs = 10_000): Promise<{ ok: true; host: string } | { ok: false; reason: string }> {
  const where = process.env.DOCKER_HOST || 'the default socket';
  try {
    const { getContainerRuntimeClient } = await testcontainers();
    // Resolves once the engine answered its info request.
    await Promise.race([
      getContainerRuntimeClient(),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs).unref()),
    ]);
    return { ok: true, host: where };
  } catch (err) {
    const msg = err instanceof Error ? err.message.split('\n')[0] : String(err);
    return { ok: false, reason: `no Docker engine reachable at ${where} (${msg})` };
  }
}

export interface PostgresContainer {
  /** Superuser URL of the server (createTestDatabase makes a fresh database on it per suite). */
  url: string;
  container: StartedTestContainer;
  stop(): Promise<void>;
}

/** A PostgreSQL server in a container, answering queries when this resolves. */
export async function startPostgresContainer(image = TEST_POSTGRES_IMAGE): Promise<PostgresContainer> {
  const { GenericContainer, Wait } = await testcontainers();
  const password = 'test';
  const container = await new GenericContainer(image)
    .withEnvironment({ POSTGRES_USER: 'postgres', POSTGRES_PASSWORD: password, POSTGRES_DB: 'postgres' })
    // Throwaway data: durability off for speed; several suites and processes share the server.
    .withCommand(['postgres', '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=300'])
    .withExposedPorts(5432)
    .withWaitStrategy(Wait.forLogMessage(/ready to accept connections/))
    .withStartupTimeout(60_000)
    .start();
  const url = `postgres://postgres:${password}@${container.getHost()}:${container.getMappedPort(5432)}/postgres`;
  // The official image logs "ready" once for its init-time server too: wait until the real one answers.
  await untilAnswers(url, 30_000);
  return {
    url,
    container,
    async stop() {
      await container.stop({ timeout: 5_000 });
    },
  };
}

async function untilAnswers(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const c = new Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    try {
      await c.connect();
      await c.query('SELECT 1');
      await c.end();
      return;
    } catch (err) {
      await c.end().catch(() => undefined);
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

export interface NatsContainer {
  url: string;
  container: StartedTestContainer;
  /** Cuts NATS off: the container stops (every connection drops); JetStream data stays in the container. */
  cut(): Promise<void>;
  /** Starts the same container again on the same host port, with its JetStream data. */
  restore(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * NATS with JetStream in a container. `hostPort` pins the published port so the URL survives
 * cut()/restore() (a suite that cuts NATS passes freePort()); otherwise the engine picks one.
 */
export async function startNatsContainer(opts: { image?: string; hostPort?: number } = {}): Promise<NatsContainer> {
  const { GenericContainer, Wait, getContainerRuntimeClient } = await testcontainers();
  const container = await new GenericContainer(opts.image ?? TEST_NATS_IMAGE)
    .withCommand(['-js', '-sd', '/tmp/nats'])
    .withExposedPorts(opts.hostPort ? { container: 4222, host: opts.hostPort } : 4222)
    .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
    .withStartupTimeout(30_000)
    .start();
  const url = `nats://${container.getHost()}:${container.getMappedPort(4222)}`;
  const client = await getContainerRuntimeClient();
  const handle = client.container.getById(container.getId());
  return {
    url,
    container,
    async cut() {
      await handle.stop({ t: 0 });
    },
    async restore() {
      await handle.start();
      await untilListening(container.getHost(), container.getMappedPort(4222), 30_000);
    },
    async stop() {
      // A container left cut (stopped) is removed directly.
      await container.stop({ timeout: 2_000 }).catch(() => handle.remove({ force: true, v: true }));
    },
  };
}

async function untilListening(host: string, port: number, timeoutMs: number): Promise<void> {
  const net = await import('node:net');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // NATS greets with INFO as soon as it accepts clients; a bare TCP accept can come earlier.
    // Every way out resolves: docker's port proxy may accept and close at once while the container
    // is still starting (no data, no error — only 'close'), which used to leave this waiting for ever.
    const greeted = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, host);
      const done = (ok: boolean) => {
        clearTimeout(timer);
        s.destroy();
        resolve(ok);
      };
      const timer = setTimeout(() => done(false), 1_000);
      s.once('data', (d) => done(d.toString().startsWith('INFO')));
      s.once('error', () => done(false));
      s.once('close', () => done(false));
    });
    if (greeted) return;
    if (Date.now() > deadline) throw new Error(`NATS on ${host}:${port} not back in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
