/** A local webhook receiver for tests: records raw bodies and headers; can fail the first N POSTs. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  eventId: string;
  signature: string;
  raw: string;
  body: any;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** The next `n` POSTs answer 500. */
  failNext(n: number): void;
  posts(): number;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  let failing = 0;
  let posts = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      posts++;
      if (failing > 0) {
        failing--;
        res.writeHead(500).end('not now');
        return;
      }
      const raw = Buffer.concat(chunks).toString('utf8');
      received.push({
        eventId: String(req.headers['market-event-id'] ?? ''),
        signature: String(req.headers['market-signature'] ?? ''),
        raw,
        body: JSON.parse(raw),
      });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    failNext: (n) => (failing = n),
    posts: () => posts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The receiver check of docs/agents.md, verbatim in spirit: HMAC-SHA256 of "<t>.<raw body>", constant-time compare. */
export function readmeVerify(secret: string, raw: string, header: string): boolean {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const crypto = require('node:crypto');
  const { t, v1 } = Object.fromEntries(header.split(',').map((p: string) => p.split('=')));
  const mac = crypto.createHmac('sha256', secret).update(`${t}.${raw}`).digest('hex');
  const fresh = Math.abs(Date.now() / 1000 - Number(t)) < 300;
  return fresh && v1?.length === mac.length && crypto.timingSafeEqual(Buffer.from(v1), Buffer.from(mac));
}
