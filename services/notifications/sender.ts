/**
 * One POST of a webhook delivery, to the address checked in ssrf.ts (the socket is pinned to it,
 * while Host and TLS SNI/certificate checks still use the URL's host name). No redirects are
 * followed; any 2xx is delivered.
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { ResolvedTarget } from './ssrf';

export interface PostResult {
  statusCode: number | null;
  error: string | null;
}

const TIMEOUT_MS = 10_000;

export function postWebhook(target: ResolvedTarget, body: string, headers: Record<string, string>): Promise<PostResult> {
  const { url, address, family } = target;
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as any)(null, [{ address, family }]);
    else (callback as any)(null, address, family);
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    const req = client.request(
      url,
      {
        method: 'POST',
        lookup: pinned,
        timeout: TIMEOUT_MS,
        headers: {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body, 'utf8')),
          'user-agent': 'agent-market-webhooks/1',
          ...headers,
        },
      },
      (res) => {
        res.resume(); // the receiver's answer is not read beyond its status
        res.on('end', () => resolve({ statusCode: res.statusCode ?? null, error: null }));
        res.on('error', () => resolve({ statusCode: res.statusCode ?? null, error: null }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer in ${TIMEOUT_MS / 1000} s`)));
    req.on('error', (err) => resolve({ statusCode: null, error: err.message.slice(0, 300) }));
    req.end(body);
  });
}
