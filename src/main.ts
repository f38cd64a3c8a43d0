/**
 * Entry point for `npm start` and for every per-service process.
 * Defaults: all services in one process, PGlite under ./data, sandbox checkout.
 */
// First: tracing patches http, express and pg as they are required (no-op unless OTEL_EXPORTER_OTLP_ENDPOINT).
import './tracing';
import { databaseUrlFor, loadConfigOrExit } from '../packages/config';
import { shutdownTracing, tracingEnabled } from '../packages/telemetry/tracing';
import { releaseStartupLines } from '../packages/telemetry/terminal-log';
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
      await shutdownTracing();
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
  const ready = port !== null ? `agent-market is listening on http://localhost:${port}` : 'agent-market services started without the gateway';
  if (config.logFormat === 'pretty') {
    // A person at a terminal (LOG_FORMAT=pretty, the default there) gets a banner; anything else (containers, tests, log shippers) gets JSON.
    if (port !== null) {
      const local = `http://localhost:${port}`;
      console.log(`\n${ready}  (public URL ${config.publicBaseUrl})`);
      console.log(`  start here    ${local}/  (what this is, how to connect an agent)   docs ${local}/docs`);
      console.log(`  tool router   POST ${local}/api/agent     discovery GET ${local}/api/agent`);
      console.log(`  register      POST ${local}/api/agent/register`);
      console.log(`  MCP           ${local}/mcp                llms.txt ${local}/llms.txt`);
    } else {
      console.log(`\n${ready}; health on http://localhost:${config.port}/readyz`);
    }
    console.log(`  services: ${services}\n  store: ${store}\n  bus: ${bus}\n`);
  } else {
    // Written whatever LOG_LEVEL says, like the banner it replaces: it is how a supervisor knows the process is up.
    const line = {
      level: 30,
      time: Date.now(),
      nodeID: broker.nodeID,
      startup: true,
      port: port ?? config.port,
      publicBaseUrl: config.publicBaseUrl,
      services: config.services,
      store,
      bus,
      tracing: tracingEnabled(),
      msg: `${ready}.  services: ${services}  store: ${store}  bus: ${bus}`,
    };
    process.stdout.write(`${JSON.stringify(line)}\n`);
  }
  // The info lines written while starting follow the banner (terminal format only).
  releaseStartupLines();
}

main().catch((err) => {
  if (process.stdout.isTTY) console.error('Failed to start:', err?.message ?? err);
  else console.error(JSON.stringify({ level: 60, time: Date.now(), msg: `Failed to start: ${err?.message ?? err}`, err: { message: err?.message, stack: err?.stack } }));
  process.exit(1);
});
