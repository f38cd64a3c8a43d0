/**
 * `npm run cluster [-- --replicas N] [--nats-nodes M] [--data-dir DIR]`: the whole marketplace distributed on this
 * machine, without Docker (packages/cluster): a private nats-server with bus auth generated from the call table
 * (M of them routed into one JetStream cluster, the streams replicated on 3 of them when M ≥ 3),
 * one PostgreSQL role per service on DATABASE_URL's server (database agent_market_cluster), every service
 * as its own process (N of each), gateways on consecutive ports from PORT (default 3000).
 * Prints each gateway URL, the data dir, then "cluster ready"; Ctrl-C / SIGTERM / SIGHUP stops everything, and so
 * does the end of the process that started it (SIGTERM to `npm run cluster` ends npm without passing it on).
 */
import fs from 'node:fs';
import path from 'node:path';
import { operatorSettings, startCluster, type Cluster } from '../packages/cluster';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/**
 * The processes this one runs under (tsx, the shell npm starts, npm, …), read from /proc: SIGTERM sent to
 * `npm run cluster` ends npm but is not passed down, so the cluster watches them and stops when one is gone.
 */
function ancestors(): number[] {
  const out: number[] = [];
  let pid = process.ppid;
  while (pid > 1 && out.length < 8) {
    out.push(pid);
    try {
      // /proc/<pid>/stat: "pid (comm) state ppid …"; comm may hold spaces, so read after its closing parenthesis.
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      break;
    }
  }
  return out;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function main(): Promise<void> {
  const replicas = Number(arg('replicas') ?? 1);
  if (!Number.isInteger(replicas) || replicas < 1) throw new Error(`--replicas must be a whole number >= 1, got ${arg('replicas')}`);
  const natsNodes = Number(arg('nats-nodes') ?? 1);
  if (!Number.isInteger(natsNodes) || natsNodes < 1) throw new Error(`--nats-nodes must be a whole number >= 1, got ${arg('nats-nodes')}`);
  const dataDir = arg('data-dir') ?? (process.env.DATA_DIR ? path.join(process.env.DATA_DIR, 'cluster') : undefined);
  let cluster: Cluster | null = null;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping the cluster…`);
    await cluster?.stop();
    console.log('cluster stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGHUP', () => void stop('SIGHUP'));
  const parents = ancestors();
  setInterval(() => {
    const gone = parents.find((pid) => !alive(pid));
    if (gone) void stop(`parent process ${gone} exited`);
  }, 1_000).unref();
  console.log(`starting the cluster: ${replicas} process(es) per service…`);
  // Your LOG_LEVEL, RATE_LIMIT_PER_MINUTE and SEED_ON_EMPTY reach every process (the spawn defaults are for tests).
  cluster = await startCluster({ replicas, natsNodes, dataDir, env: operatorSettings(process.env), log: (l) => console.log(`  ${l}`) });
  if (stopping) return;
  for (const [service, procs] of Object.entries(cluster.processes)) {
    console.log(`  ${service.padEnd(13)} ${procs.map((p) => `pid ${p.child.pid} (${service === 'gateway' ? 'http' : 'health'} :${p.port})`).join(', ')}`);
    for (const p of procs) {
      p.child.on('exit', (code, sig) => {
        if (!stopping) console.error(`${service} (pid ${p.child.pid}) exited (${sig ?? code}):\n${p.output().slice(-2000)}`);
      });
    }
  }
  for (const g of cluster.gateways) console.log(`gateway ${g}`);
  console.log(`data dir ${cluster.dataDir}  (credentials/<service>.env; audit: DATA_DIR=${cluster.dataDir} MARKET_BASE_URL=${cluster.gateways[0]} npm run audit:ledger)`);
  for (const n of cluster.nats.nodes ?? []) console.log(`  nats node ${n.name}: ${n.url} (monitoring http://127.0.0.1:${n.monitorPort}/jsz)`);
  console.log(`nats ${cluster.nats.url}  database ${cluster.adminDatabaseUrl.replace(/\/\/[^@]*@/, '//…@')}`);
  console.log('cluster ready');
}

main().catch((err) => {
  console.error(`cluster failed to start: ${(err as Error).message}`);
  process.exit(1);
});
