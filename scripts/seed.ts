/**
 * npm run seed: creates the seed sellers (isSeed) and their listings in the configured store
 * (DATABASE_URL, or PGlite in DATA_DIR). Idempotent: running it again creates nothing new.
 * Runs the services in-process (without the HTTP gateway), so every event consumer sees the new agents.
 * PGlite allows one process per data directory: with a server running on DATA_DIR it refuses.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ALL_SERVICES, loadConfigOrExit, type Config } from '../packages/config';
import { createBroker } from '../packages/broker';
import { base62 } from '../packages/ids';
import { schemasFor } from '../src/services';
import { callListings, LISTINGS } from '../packages/contracts/listings';

async function serverAnswers(port: number): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(1500) });
    return res.ok || res.status > 0;
  } catch {
    return false;
  }
}

async function main(): Promise<void> {
  const config: Config = loadConfigOrExit();
  if (!config.databaseUrl) {
    if (config.dataDir === 'memory://') {
      console.error('DATA_DIR=memory:// would seed a database that disappears when this script exits. Point DATA_DIR at the server\'s data directory.');
      process.exit(2);
    }
    const tokenFile = path.join(config.dataDir, 'operator-token');
    if (fs.existsSync(tokenFile) && (await serverAnswers(config.port))) {
      console.error(
        `A server is running on ${config.dataDir} (it answers on port ${config.port}). PGlite allows one process per data directory:\n` +
          `stop the server (Ctrl-C), run \`npm run seed\` again, then start it. A fresh data directory is seeded automatically on the first \`npm start\`.`,
      );
      process.exit(1);
    }
  }
  const services = ALL_SERVICES.filter((s) => s !== 'gateway');
  const seedConfig: Config = { ...config, services, seedOnEmpty: false, sweepIntervalMs: 0, logLevel: process.env.LOG_LEVEL ?? 'warn' };
  const broker = createBroker({ config: seedConfig, services: schemasFor(services), brokerOptions: { nodeID: `seed-${base62(6)}` } });
  await broker.start();
  try {
    const result = await callListings(broker, LISTINGS.seed, {}, { meta: { internal: true } });
    const store = config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `PGlite in ${config.dataDir}`;
    if (result.sellersCreated === 0 && result.listingsCreated === 0) console.log(`Already seeded (${store}): nothing to do.`);
    else console.log(`Seeded ${store}: ${result.sellersCreated} seed sellers, ${result.listingsCreated} listings.`);
  } finally {
    await broker.stop();
  }
}

main().catch((err) => {
  console.error('Seeding failed:', err?.message ?? err);
  process.exit(1);
});
