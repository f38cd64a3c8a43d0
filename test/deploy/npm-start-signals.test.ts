/**
 * `npm start` as a supervisor runs it (issue 37): SIGTERM to the npm process stops the server itself.
 * npm forwards the signal to its child only, so the start script must make node that child (no shell or
 * tsx CLI wrapper in between, or they die and the server is re-parented and keeps the port). On the way
 * out an in-flight request still gets its answer, with `Connection: close`, and idle keep-alive sockets
 * are closed at once rather than after their timeout.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../kit';

const describePosix = process.platform === 'win32' ? describe.skip : describe;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

function descendants(pid: number): number[] {
  let out: string;
  try {
    out = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' });
  } catch {
    return []; // ps exits 1 when there is none
  }
  const children = out.split('\n').map((l) => Number(l.trim())).filter((n) => n > 0);
  return children.flatMap((c) => [c, ...descendants(c)]);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function waitFor<T>(what: string, fn: () => Promise<T | null | false> | T | null | false, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A raw HTTP/1.1 connection: what was received, and whether the server ended it. */
function rawConnection(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  const state = { received: '', ended: false };
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (state.received += d));
  socket.on('end', () => (state.ended = true));
  socket.on('close', () => (state.ended = true));
  socket.on('error', () => (state.ended = true));
  return { socket, state, ready: new Promise<void>((r) => socket.once('connect', () => r())) };
}

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });

describePosix('npm start and signals', () => {
  let npm: ChildProcess | null = null;
  let dataDir: string;
  let tree: number[] = [];
  let output = '';

  afterAll(() => {
    // Only what this test started: the npm process and the processes recorded under it.
    for (const pid of [npm?.pid, ...tree]) if (pid && alive(pid)) process.kill(pid, 'SIGKILL');
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test('SIGTERM to npm stops the server: in-flight answered with Connection: close, idle sockets closed, port free, no orphan', async () => {
    const port = await freePort();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-market-npm-start-'));
    const env = { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', NODE_ENV: 'development', SEED_ON_EMPTY: 'false' };
    for (const k of ['DATABASE_URL', 'TRANSPORTER', 'SERVICES', 'PUBLIC_BASE_URL', 'NODE_OPTIONS']) delete env[k];
    npm = spawn('npm', ['start', '--silent'], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    npm.stdout!.on('data', (d) => (output += d));
    npm.stderr!.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((r) => npm!.once('exit', (code) => r(code)));

    await waitFor(
      `npm start answering on ${port}`,
      async () => {
        if (npm!.exitCode !== null) throw new Error(`npm start exited early:\n${output}`);
        return (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.status === 200;
      },
      150_000,
    );
    tree = descendants(npm.pid!);
    expect(tree.length).toBeGreaterThan(0);

    // An idle keep-alive socket, and a request in flight (headers sent, body not yet).
    const idle = rawConnection(port);
    await idle.ready;
    idle.socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: keep-alive\r\n\r\n`);
    await waitFor('the keep-alive answer', () => /\r\n\r\n/.test(idle.state.received) && idle.state.received, 10_000);
    expect(idle.state.received).toMatch(/^HTTP\/1\.1 200/);
    expect(idle.state.received.toLowerCase()).toContain('connection: keep-alive');

    const body = JSON.stringify({ tool: 'no_such_tool', arguments: {} });
    const inFlight = rawConnection(port);
    await inFlight.ready;
    inFlight.socket.write(
      `POST /api/agent HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: keep-alive\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    await new Promise((r) => setTimeout(r, 300));

    const signalled = Date.now();
    npm.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    inFlight.socket.write(body.slice(5));

    await waitFor('the in-flight answer', () => inFlight.state.ended && inFlight.state.received, 10_000);
    const head = inFlight.state.received.split('\r\n\r\n')[0].toLowerCase();
    expect(head).toMatch(/^http\/1\.1 4\d\d/); // answered (an unknown tool), not cut
    expect(head).toContain('connection: close');
    await waitFor('the idle keep-alive socket closed by the server', () => idle.state.ended, 5_000);

    expect(await Promise.race([exited, new Promise((r) => setTimeout(() => r('still running'), 15_000))])).toBe(0);
    await waitFor(`port ${port} free`, async () => !(await portOpen(port)), 5_000);
    expect(Date.now() - signalled).toBeLessThan(15_000);
    await waitFor('no orphaned process', () => tree.every((pid) => !alive(pid)), 5_000);
    idle.socket.destroy();
    inFlight.socket.destroy();
  }, 240_000);
});
