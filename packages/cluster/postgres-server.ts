/**
 * A private PostgreSQL server (its own data directory, a free port): for tests and `npm run bench:faults`
 * that restart, stop and freeze the database under load (the shared one of TEST_DATABASE_URL must keep
 * running). initdb + postgres from the machine's PostgreSQL binaries (PG_BIN_DIR, or the newest
 * /usr/lib/postgresql/<v>/bin); when this process runs as root, the server runs as the `postgres` user
 * (PostgreSQL refuses root). privatePostgresAvailable() says whether it can be started here.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './nats-server';

export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres (trust auth: the cluster's roles get their own passwords). */
  url: string;
  port: number;
  /** Starts it (again) on the same port and data directory; resolves when it accepts connections. */
  start(): Promise<void>;
  /** A fast shutdown (SIGINT: connections are cut, in-flight transactions roll back); resolves on exit. */
  stop(): Promise<void>;
  /** `pg_ctl restart -m fast`: stop, then start at once. */
  restart(): Promise<void>;
  /** SIGSTOP every process of the server: connections stay open and nothing answers. */
  freeze(): void;
  /** SIGCONT every process frozen by freeze(). */
  thaw(): void;
  /** Stops it and removes the data directory. */
  dispose(): Promise<void>;
}

function binDir(): string | null {
  if (process.env.PG_BIN_DIR) return fs.existsSync(path.join(process.env.PG_BIN_DIR, 'initdb')) ? process.env.PG_BIN_DIR : null;
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return null;
  const versions = fs
    .readdirSync(root)
    .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? path.join(root, versions[0], 'bin') : null;
}

/** The uid/gid the server runs as: ours, or the `postgres` user's when we are root. */
function runAs(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    return { uid, gid };
  } catch {
    return null;
  }
}

export function privatePostgresAvailable(): boolean {
  return binDir() !== null && (process.getuid?.() !== 0 || runAs() !== null);
}

/** The PIDs of a process and all its descendants (from /proc). */
function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    out.push(pid);
    for (const c of children.get(pid) ?? []) walk(c);
  };
  walk(root);
  return out;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir();
  if (!bin) throw new Error('no PostgreSQL binaries (set PG_BIN_DIR to the directory holding initdb and postgres)');
  const user = runAs();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'market-pg-'));
  if (user) fs.chownSync(dataDir, user.uid, user.gid);
  const asUser = user ? { uid: user.uid, gid: user.gid } : {};
  execFileSync(path.join(bin, 'initdb'), ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8'], { ...asUser, stdio: 'ignore', cwd: dataDir });
  const port = await freePort();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let child: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();
  let frozen: number[] = [];

  const ready = async (timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        execFileSync(path.join(bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-q']);
        return;
      } catch {
        if (child?.exitCode != null) throw new Error(`private PostgreSQL exited with ${child.exitCode}`);
        if (Date.now() > deadline) throw new Error(`private PostgreSQL not ready on ${port} in ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };

  const pg: PrivatePostgres = {
    url,
    port,
    async start() {
      const args = ['-D', dataDir, '-p', String(port), '-k', dataDir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'max_connections=300'];
      child = spawn(path.join(bin, 'postgres'), args, { ...asUser, stdio: 'ignore', cwd: dataDir });
      const c = child;
      exited = new Promise((resolve) => c.once('exit', () => resolve()));
      await ready(30_000);
    },
    async stop() {
      if (!child || child.exitCode != null) return;
      pg.thaw();
      child.kill('SIGINT');
      await exited;
    },
    async restart() {
      await pg.stop();
      await pg.start();
    },
    freeze() {
      if (!child?.pid) return;
      frozen = processTree(child.pid);
      for (const pid of frozen) process.kill(pid, 'SIGSTOP');
    },
    thaw() {
      for (const pid of frozen) {
        try {
          process.kill(pid, 'SIGCONT');
        } catch {
          // exited meanwhile
        }
      }
      frozen = [];
    },
    async dispose() {
      await pg.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
  await pg.start();
  return pg;
}
