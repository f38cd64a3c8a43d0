/**
 * A TCP proxy in front of a real PostgreSQL that a test can break the way a database breaks: drop every
 * connection (a restart), refuse connections (down), or stop forwarding while keeping sockets open (a frozen
 * server: SIGSTOP, where the kernel still accepts and ACKs). Nothing about the database is mocked; only the
 * path to it is cut. The shared server behind it is never touched.
 */
import net from 'node:net';

export type ProxyState = 'open' | 'frozen' | 'down';

interface Pair {
  client: net.Socket;
  upstream: net.Socket | null;
  /** Bytes read while frozen, forwarded on thaw (client → server, server → client). */
  toServer: Buffer[];
  toClient: Buffer[];
}

export class FaultProxy {
  private server: net.Server | null = null;
  private readonly pairs = new Set<Pair>();
  private state: ProxyState = 'open';
  port = 0;

  constructor(
    private readonly target: { host: string; port: number },
  ) {}

  /** Listens on a free port of 127.0.0.1 (or the port it had: `up` after `down`). */
  async start(): Promise<number> {
    const server = net.createServer((client) => this.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as net.AddressInfo).port;
    return this.port;
  }

  /** A URL like `url` that goes through the proxy. */
  urlFor(url: string): string {
    const u = new URL(url);
    u.hostname = '127.0.0.1';
    u.port = String(this.port);
    return u.toString();
  }

  get connections(): number {
    return this.pairs.size;
  }

  /** Every connection is cut at once (what clients of a restarted server see). */
  dropAll(): void {
    for (const pair of this.pairs) this.close(pair);
  }

  /** Connections are refused (nothing listens) and the open ones are cut. */
  async down(): Promise<void> {
    this.state = 'down';
    const server = this.server;
    this.server = null;
    this.dropAll();
    if (server) await new Promise<void>((r) => server.close(() => r()));
  }

  /** Listening again, on the same port. */
  async up(): Promise<void> {
    this.state = 'open';
    if (!this.server) await this.start();
  }

  /** Nothing is forwarded either way and new connections are held, but every socket stays open. */
  freeze(): void {
    this.state = 'frozen';
    for (const { client, upstream } of this.pairs) {
      client.pause();
      upstream?.pause();
    }
  }

  thaw(): void {
    this.state = 'open';
    for (const pair of this.pairs) {
      if (!pair.upstream) this.connectUpstream(pair);
      for (const b of pair.toClient.splice(0)) pair.client.write(b);
      if (pair.upstream && !pair.upstream.connecting) for (const b of pair.toServer.splice(0)) pair.upstream.write(b);
      pair.client.resume();
      pair.upstream?.resume();
    }
  }

  async stop(): Promise<void> {
    await this.down();
  }

  private accept(client: net.Socket): void {
    const pair: Pair = { client, upstream: null, toServer: [], toClient: [] };
    this.pairs.add(pair);
    client.on('error', () => this.close(pair));
    client.on('close', () => this.close(pair));
    client.on('data', (b: Buffer) => {
      if (this.state === 'frozen' || !pair.upstream || pair.upstream.connecting) pair.toServer.push(b);
      else pair.upstream.write(b);
    });
    if (this.state === 'frozen') client.pause();
    else this.connectUpstream(pair);
  }

  private connectUpstream(pair: Pair): void {
    const upstream = net.connect(this.target.port, this.target.host);
    pair.upstream = upstream;
    upstream.on('error', () => this.close(pair));
    upstream.on('close', () => this.close(pair));
    upstream.on('connect', () => {
      if (this.state !== 'frozen') for (const b of pair.toServer.splice(0)) upstream.write(b);
    });
    upstream.on('data', (b: Buffer) => {
      if (this.state === 'frozen') pair.toClient.push(b);
      else pair.client.write(b);
    });
  }

  private close(pair: Pair): void {
    if (!this.pairs.delete(pair)) return;
    pair.client.destroy();
    pair.upstream?.destroy();
  }
}
