/**
 * One POST of a webhook delivery, to the address checked in ssrf.ts (the socket is pinned to it,
 * while Host and TLS SNI/certificate checks still use the URL's host name). No redirects are
 * followed; any 2xx is delivered.
 *
 * One total deadline covers the whole attempt — connect, TLS, sending, and the answer's status line
 * and headers — not an idle timeout: a receiver that trickles a byte every few seconds is cut off at
 * the deadline like a silent one (issue #23). Only the status is read: the answer's body is not
 * waited for, and the socket is closed once the headers are in.
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { ResolvedTarget } from './ssrf';

export interface PostResult {
  statusCode: number | null;
  error: string | null;
}

/** The whole attempt's deadline (connect + headers), in ms. */
export const ATTEMPT_DEADLINE_MS = 10_000;

export function postWebhook(target: ResolvedTarget, body: string, headers: Record<string, string>, deadlineMs = ATTEMPT_DEADLINE_MS): Promise<PostResult> {
  const { url, address, family } = target;
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (r: PostResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const req = client.request(
      url,
      {
        method: 'POST',
        lookup: pinned,
        agent: false, // a socket of its own, closed after the answer: nothing shared between endpoints
        headers: {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body, 'utf8')),
          'user-agent': 'agent-market-webhooks/1',
          connection: 'close',
          ...headers,
        },
      },
      (res) => {
        finish({ statusCode: res.statusCode ?? null, error: null });
        res.destroy(); // the receiver's body is not read
      },
    );
    const timer = setTimeout(() => {
      finish({ statusCode: null, error: `no answer within ${deadlineMs / 1000} s (connect + headers)` });
      req.destroy();
    }, deadlineMs);
    req.on('error', (err) => finish({ statusCode: null, error: err.message.slice(0, 300) }));
    req.end(body);
  });
}
