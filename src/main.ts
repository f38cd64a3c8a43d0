/**
 * Entry point for `npm start` and for every per-service process.
 * Defaults: all services in one process, PGlite under ./data, sandbox checkout.
 */
import { databaseUrlFor, loadConfigOrExit } from '../packages/config';
import { createMarketplace, gatewayPort } from './app';
import { startHealthServer } from './health-server';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const broker = createMarketplace(config);
  let stopping = false;
  let health: import('node:http').Server | null = null;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    broker.logger.info(`${signal}: stopping (in-flight calls finish first)`);
    try {
      await broker.stop();
      health?.close();
      process.exit(0);
    } catch (err) {
      console.error(err);
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  await broker.start();
  const port = gatewayPort(broker);
  // A process without the gateway still answers probes on PORT: /healthz, /readyz, /metrics.
  if (port === null) health = await startHealthServer(broker, config, { stopping: () => stopping });
  const store = config.services.some((s) => databaseUrlFor(config, s)) ? 'PostgreSQL (DATABASE_URL)' : `PGlite in ${config.dataDir}`;
  const bus = config.transporter ? `NATS (${config.transporter})` : 'in-process bus';
  const services = config.services.join(', ');
  if (port !== null) {
    const local = `http://localhost:${port}`;
    console.log(`\nagent-market is listening on ${local}  (public URL ${config.publicBaseUrl})`);
    console.log(`  tool router   POST ${local}/api/agent     discovery GET ${local}/api/agent`);
    console.log(`  register      POST ${local}/api/agent/register`);
    console.log(`  MCP           ${local}/mcp                llms.txt ${local}/llms.txt`);
  } else {
    console.log(`\nagent-market services started without the gateway; health on http://localhost:${config.port}/readyz`);
  }
  console.log(`  services: ${services}\n  store: ${store}\n  bus: ${bus}\n`);
}

main().catch((err) => {
  console.error('Failed to start:', err?.message ?? err);
  process.exit(1);
});
