/**
 * Idle CPU of the distributed cluster in steady state: `npm run cluster`'s shape started fresh, left alone
 * for IDLE_SETTLE_S (default 90 s: start-up's garbage collections and first sweeps done), then its
 * processes' CPU (and its nats-server's) read from /proc over IDLE_WINDOW_S (default 30 s).
 * Usage: BENCH_DATABASE_URL=… npx tsx bench/idle-steady.ts
 */
import { startCluster } from '../packages/cluster';
import { natsServerPid, readStat } from './proc';

const cpuMs = (pid: number): number => readStat(pid)?.cpuMs ?? 0;

const SETTLE_S = Number(process.env.IDLE_SETTLE_S ?? 90);
const WINDOW_S = Number(process.env.IDLE_WINDOW_S ?? 30);

async function main(): Promise<void> {
  const url = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('set BENCH_DATABASE_URL');
  const server = new URL(url);
  server.pathname = '/postgres';
  const cluster = await startCluster({ fresh: true, postgresUrl: server.toString(), port: 0, env: { LOG_LEVEL: 'warn' } });
  try {
    const procs: Array<{ label: string; pid: number }> = [];
    for (const [service, list] of Object.entries(cluster.processes)) for (const p of list) procs.push({ label: service, pid: p.child.pid! });
    const nats = natsServerPid(cluster.nats.port);
    if (nats) procs.push({ label: 'nats-server', pid: nats });
    await new Promise((r) => setTimeout(r, SETTLE_S * 1000));
    const before = procs.map((p) => cpuMs(p.pid));
    await new Promise((r) => setTimeout(r, WINDOW_S * 1000));
    const rows = procs.map((p, i) => ({ ...p, msPerS: Math.round(((cpuMs(p.pid) - before[i]) / WINDOW_S) * 10) / 10 }));
    for (const r of rows) console.log(`${r.label.padEnd(16)}${String(r.msPerS).padStart(8)} ms/s`);
    console.log(`${'total'.padEnd(16)}${String(Math.round(rows.reduce((s, r) => s + r.msPerS, 0) * 10) / 10).padStart(8)} ms/s  (steady idle: ${SETTLE_S} s after start, ${WINDOW_S} s window)`);
  } finally {
    await cluster.stop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
