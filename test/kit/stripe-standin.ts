/**
 * A local HTTP stand-in of the part of the Stripe API the marketplace uses (Checkout Sessions:
 * create, retrieve, expire). The real `stripe` SDK talks to it through its host/port/protocol
 * options (STRIPE_API_BASE=http://127.0.0.1:<port>). Tests move a session to paid with markPaid()
 * (what a human paying on Stripe's page does) and sign webhook events with the SDK's own
 * generateTestHeaderString, exactly as Stripe signs them.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { base62 } from '../../packages/ids';

export interface StandInSession {
  id: string;
  object: 'checkout.session';
  mode: string;
  status: 'open' | 'complete' | 'expired';
  payment_status: 'unpaid' | 'paid' | 'no_payment_required';
  amount_total: number;
  amount_subtotal: number;
  currency: string;
  client_reference_id: string | null;
  metadata: Record<string, string>;
  url: string | null;
  success_url: string | null;
  cancel_url: string | null;
  expires_at: number;
  created: number;
  livemode: false;
  payment_intent: string | null;
}

export interface SignedWebhook {
  payload: string;
  signature: string;
}

export interface StripeStandIn {
  /** Base URL for STRIPE_API_BASE. */
  url: string;
  secretKey: string;
  webhookSecret: string;
  sessions: Map<string, StandInSession>;
  /** Every API request received (method and path), for assertions. */
  requests: Array<{ method: string; path: string }>;
  /** The human paid on Stripe's page. `asyncPending`: a delayed payment method (paid later). */
  markPaid(sessionId: string, opts?: { asyncPending?: boolean }): StandInSession;
  /** A delayed payment finally succeeded. */
  markAsyncSucceeded(sessionId: string): StandInSession;
  /** A Stripe event about a session (current state unless `object` overrides it), signed with the webhook secret. */
  signedEvent(type: string, sessionId: string, opts?: { secret?: string; timestamp?: number; object?: Record<string, unknown>; eventId?: string }): SignedWebhook;
  /** Where the hosted page delivers checkout.session.completed after paying (null: nowhere, a lost webhook). */
  setWebhookUrl(url: string | null): void;
  stop(): Promise<void>;
}

/** Parses Stripe's form encoding (a[b][0][c]=v) into nested objects and arrays. */
export function parseStripeForm(body: string): Record<string, any> {
  const root: Record<string, any> = {};
  for (const [rawKey, value] of new URLSearchParams(body)) {
    const parts = rawKey.replace(/\]/g, '').split('[');
    let node: any = root;
    parts.forEach((part, i) => {
      const last = i === parts.length - 1;
      if (last) {
        node[part] = value;
        return;
      }
      if (node[part] === undefined) node[part] = /^\d+$/.test(parts[i + 1]) ? [] : {};
      node = node[part];
    });
  }
  return root;
}

function stripeError(res: http.ServerResponse, status: number, message: string, code?: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { type: 'invalid_request_error', message, ...(code ? { code } : {}) } }));
}

export interface StandInOptions {
  secretKey?: string;
  webhookSecret?: string;
  /** When set, paying on the hosted page (POST /pay/:id) also delivers a signed checkout.session.completed here. */
  webhookUrl?: string;
  /**
   * The host name in the hosted page's URL (default 127.0.0.1). A browser test passes 'localhost' so
   * that Stripe's page and the marketplace are different sites, as in production: cookies then
   * behave as they do after a real cross-site return from Stripe.
   */
  pageHost?: string;
}

export async function startStripeStandIn(opts: StandInOptions = {}): Promise<StripeStandIn> {
  const secretKey = opts.secretKey ?? `sk_test_${base62(24)}`;
  const webhookSecret = opts.webhookSecret ?? `whsec_${base62(32)}`;
  const sessions = new Map<string, StandInSession>();
  /** Idempotency key → the session it created and the request body it was first used with. */
  const idempotent = new Map<string, { id: string; body: string }>();
  const requests: Array<{ method: string; path: string }> = [];
  let pageBase = '';
  let webhookUrl = opts.webhookUrl ?? null;

  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const method = req.method ?? 'GET';
      requests.push({ method, path: url.pathname });
      // The hosted payment page a human would see (no API key): GET shows a Pay form, POST pays.
      const pay = /^\/pay\/([^/]+)$/.exec(url.pathname);
      if (pay) {
        const s = sessions.get(decodeURIComponent(pay[1]));
        res.setHeader('content-type', 'text/html; charset=utf-8');
        if (!s) {
          res.writeHead(404);
          res.end('<!doctype html><p>No such checkout session.</p>');
          return;
        }
        if (method === 'POST' && s.status === 'open') {
          api.markPaid(s.id);
          if (webhookUrl) {
            const e = api.signedEvent('checkout.session.completed', s.id);
            void fetch(webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': e.signature }, body: e.payload }).catch(() => undefined);
          }
          // The browser's form (return=1) is sent back to success_url, as Stripe's page does after paying.
          if (new URLSearchParams(body).get('return') === '1' && s.success_url) {
            res.writeHead(303, { location: s.success_url.replace('{CHECKOUT_SESSION_ID}', s.id) });
            res.end();
            return;
          }
        }
        res.writeHead(200);
        res.end(
          s.status === 'open'
            ? `<!doctype html><h1>Pay ${(s.amount_total / 100).toFixed(2)} ${s.currency.toUpperCase()}</h1><form method="post"><input type="hidden" name="return" value="1"><button type="submit">Pay</button></form>`
            : `<!doctype html><p>Session ${s.status}, payment ${s.payment_status}.</p>`,
        );
        return;
      }
      if (req.headers.authorization !== `Bearer ${secretKey}`) {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } }));
        return;
      }
      const send = (obj: unknown) => {
        res.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_${base62(14)}` });
        res.end(JSON.stringify(obj));
      };
      let m: RegExpExecArray | null;
      if (method === 'POST' && url.pathname === '/v1/checkout/sessions') {
        const key = req.headers['idempotency-key'];
        const first = typeof key === 'string' ? idempotent.get(key) : undefined;
        if (first) {
          // As Stripe: a key reused with other parameters is an error, not a replay.
          if (first.body !== body) {
            res.writeHead(400, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ error: { type: 'idempotency_error', message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.` } }));
            return;
          }
          return send(sessions.get(first.id));
        }
        const p = parseStripeForm(body);
        if (p.mode !== 'payment') return stripeError(res, 400, 'mode must be payment', 'parameter_invalid');
        const items: any[] = Array.isArray(p.line_items) ? p.line_items : [];
        if (!items.length) return stripeError(res, 400, 'line_items is required', 'parameter_missing');
        let amount = 0;
        let currency = '';
        for (const it of items) {
          const unit = Number(it?.price_data?.unit_amount);
          const qty = Number(it?.quantity ?? 1);
          if (!Number.isInteger(unit) || unit <= 0 || !Number.isInteger(qty) || qty <= 0) {
            return stripeError(res, 400, 'line_items need price_data.unit_amount and quantity', 'parameter_invalid_integer');
          }
          amount += unit * qty;
          currency = String(it.price_data.currency ?? '').toLowerCase();
        }
        const id = `cs_test_${base62(40)}`;
        const now = Math.floor(Date.now() / 1000);
        const session: StandInSession = {
          id,
          object: 'checkout.session',
          mode: 'payment',
          status: 'open',
          payment_status: 'unpaid',
          amount_total: amount,
          amount_subtotal: amount,
          currency,
          client_reference_id: p.client_reference_id ?? null,
          metadata: p.metadata ?? {},
          url: `${pageBase}/pay/${id}`,
          success_url: p.success_url ?? null,
          cancel_url: p.cancel_url ?? null,
          expires_at: p.expires_at ? Number(p.expires_at) : now + 86_400,
          created: now,
          livemode: false,
          payment_intent: null,
        };
        sessions.set(id, session);
        if (typeof key === 'string') idempotent.set(key, { id, body });
        return send(session);
      }
      if (method === 'GET' && (m = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(url.pathname))) {
        const s = sessions.get(decodeURIComponent(m[1]));
        if (!s) return stripeError(res, 404, `No such checkout.session: '${m[1]}'`, 'resource_missing');
        return send(s);
      }
      if (method === 'POST' && (m = /^\/v1\/checkout\/sessions\/([^/]+)\/expire$/.exec(url.pathname))) {
        const s = sessions.get(decodeURIComponent(m[1]));
        if (!s) return stripeError(res, 404, `No such checkout.session: '${m[1]}'`, 'resource_missing');
        if (s.status !== 'open') return stripeError(res, 400, `Only Checkout Sessions with a status in ["open"] can be expired. This Checkout Session has a status of "${s.status}".`);
        s.status = 'expired';
        s.url = null;
        return send(s);
      }
      stripeError(res, 404, `Unrecognized request URL (${method}: ${url.pathname}).`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  pageBase = `http://${opts.pageHost ?? '127.0.0.1'}:${(server.address() as AddressInfo).port}`;

  const get = (id: string) => {
    const s = sessions.get(id);
    if (!s) throw new Error(`stand-in: no session ${id}`);
    return s;
  };

  const api: StripeStandIn = {
    url: baseUrl,
    secretKey,
    webhookSecret,
    sessions,
    requests,
    markPaid(id, o = {}) {
      const s = get(id);
      if (s.status !== 'open') throw new Error(`stand-in: session ${id} is ${s.status}`);
      s.status = 'complete';
      s.payment_status = o.asyncPending ? 'unpaid' : 'paid';
      s.payment_intent = `pi_${base62(24)}`;
      return s;
    },
    markAsyncSucceeded(id) {
      const s = get(id);
      s.payment_status = 'paid';
      return s;
    },
    signedEvent(type, sessionId, o = {}) {
      const object = o.object ?? { ...get(sessionId) };
      const event = {
        id: o.eventId ?? `evt_${base62(24)}`,
        object: 'event',
        api_version: '2025-01-01',
        created: Math.floor(Date.now() / 1000),
        livemode: false,
        pending_webhooks: 1,
        request: { id: null, idempotency_key: null },
        type,
        data: { object },
      };
      const payload = JSON.stringify(event, null, 2);
      const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: o.secret ?? webhookSecret, timestamp: o.timestamp });
      return { payload, signature };
    },
    setWebhookUrl(url) {
      webhookUrl = url;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return api;
}

// `npx tsx test/kit/stripe-standin.ts`: run it on its own (STANDIN_PORT, STANDIN_WEBHOOK_URL) for manual checks.
if (require.main === module) {
  void startStripeStandIn({ webhookUrl: process.env.STANDIN_WEBHOOK_URL }).then((s) => {
    console.log(`STRIPE_API_BASE=${s.url}\nSTRIPE_SECRET_KEY=${s.secretKey}\nSTRIPE_WEBHOOK_SECRET=${s.webhookSecret}`);
  });
}
