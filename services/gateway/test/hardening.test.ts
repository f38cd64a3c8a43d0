/**
 * Issue #13 "Hardening", as named regression tests: every input of the attack report answers a 4xx
 * envelope naming the field (never 500, never a stall), nothing changes on a refused call, and the
 * ledger audit stays clean. Embedded (PGlite), through the real HTTP gateway.
 */
import http from 'node:http';
import zlib from 'node:zlib';
import { ConfigError, loadConfig } from '../../../packages/config';
import { startTestApp, freePort, type TestApp } from '../../../test/kit';
import { creditGas, expectLedgerClean } from '../../../test/kit/ledger';
import { prepareDelivery } from '../../escrow/delivery';
import { newAgent, newListing as listingOf, wallet, type TestAgent } from '../../escrow/test/helpers';

/** A listing of a fresh seller (the quality gate refuses near-duplicates of one seller's listings). */
async function newListing(app: TestApp, _seller: TestAgent, extra: Record<string, unknown> = {}) {
  const seller = await newAgent(app, 'Seller');
  const listing = await listingOf(app, seller, { priceGas: 100, ...extra });
  return { ...listing, seller };
}

type Res = { status: number; headers: Headers; body: any };

async function post(app: TestApp, body: string | Buffer, headers: Record<string, string> = {}, path = '/api/agent'): Promise<Res> {
  const res = await fetch(`${app.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : new Uint8Array(body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

function expectRefused(r: { status: number; body: any }, field: string | RegExp, code = 'invalid_arguments'): void {
  expect({ status: r.status, code: r.body?.error?.code }).toEqual({ status: 400, code });
  const fields = (r.body.error!.details?.errors ?? []).map((e: any) => e.field).join(' ');
  const text = `${r.body.error.message} ${r.body.error!.hint ?? ''} ${fields}`;
  expect(text).toMatch(field);
}

function nested(depth: number, leaf: unknown = 'x'): unknown {
  let v: unknown = leaf;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

/** JSON text nested `depth` levels (built as text: JSON.stringify itself overflows the stack at 20,000). */
function nestedJson(depth: number, leaf = '"x"'): string {
  return `${'{"a":'.repeat(depth)}${leaf}${'}'.repeat(depth)}`;
}

describe('hardening (embedded)', () => {
  let app: TestApp;
  let buyer: TestAgent;
  let seller: TestAgent;
  beforeAll(async () => {
    app = await startTestApp();
    [buyer, seller] = await Promise.all([newAgent(app, 'Buyer'), newAgent(app, 'Seller')]);
    await creditGas(app, buyer.id, 20_000, 'fleet');
  });
  afterAll(async () => {
    await expectLedgerClean(app);
    await app.stop();
  });

  describe('ReDoS: seller regexes never run on a backtracking engine', () => {
    const catastrophic = { type: 'object', properties: { summary: { type: 'string', pattern: '^(a+)+$' }, notes: { type: 'string', pattern: '^(a|aa)+$' } } };

    it('a catastrophic pattern against a long input answers at once (a backtracking engine would never finish)', () => {
      const long = `${'a'.repeat(30_000)}!`;
      const delivery = { summary: `${'a'.repeat(3000)}!`, notes: long };
      // Warm-up: compiles the schema (cached by its text) and lets the JIT see the code once.
      expect(() => prepareDelivery({ ...delivery, warm: true }, catastrophic)).toThrow(/deliverableSchema/);
      const started = process.hrtime.bigint();
      expect(() => prepareDelivery(delivery, catastrophic)).toThrow(/deliverableSchema/);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      console.log(`catastrophic pattern ^(a+)+$ and ^(a|aa)+$ against ${long.length} characters: ${ms.toFixed(2)} ms`);
      // A backtracking engine needs ~2^26 steps for 26 characters (so never ends on 30,000); RE2 is linear in the
      // input: a few ms on a quiet machine. The bound only has to tell "linear" from "never", whatever the load.
      expect(ms).toBeLessThan(2_000);
    });

    it('the issue\'s listing + purchase + delivery answers 400 at once, and the purchase stays open', async () => {
      const listing = await newListing(app, seller, { deliverableSchema: { type: 'object', properties: { summary: { type: 'string', pattern: '^(a+)+$' } } } });
      const { purchase } = await app.api.ok('purchase_service', { listingId: listing.id }, buyer.apiKey);
      const r = await app.api.call('deliver_work', { purchaseId: purchase.id, delivery: { summary: `${'a'.repeat(3990)}!` } }, listing.seller.apiKey);
      expectRefused(r, /deliverableSchema|delivery\.summary/);
      const ok = await app.api.call('deliver_work', { purchaseId: purchase.id, delivery: { summary: 'aaaa' } }, listing.seller.apiKey);
      expect(ok.status).toBe(200);
    });

    it('a pattern RE2 cannot run in linear time (backreference, lookahead) is refused at listing time', async () => {
      for (const pattern of ['^(a+)\\1$', '^(?=a)a+$']) {
        const r = await app.api.call(
          'list_service',
          {
            title: 'Write Jest unit tests for a TypeScript module',
            description: 'Send me the path of a TypeScript module and a short note on its public functions. I deliver a Jest test file with ten or more unit tests.',
            priceGas: 100,
            deliverableSchema: { type: 'object', properties: { summary: { type: 'string', pattern } } },
          },
          seller.apiKey,
        );
        expectRefused(r, /deliverableSchema/);
      }
    });
  });

  describe('NUL bytes and lone surrogates → 400 naming the field, nothing stored', () => {
    it('register with a NUL in displayName, label or referredBy', async () => {
      for (const extra of [{ displayName: 'Evil\u0000Agent' }, { label: 'l\u0000' }, { referredBy: 'agt_\u0000' }]) {
        const r = await post(app, JSON.stringify({ provider: 'cursor', displayName: 'Fine', ...extra }), {}, '/api/agent/register');
        expectRefused(r, new RegExp(Object.keys(extra)[0]));
      }
    });

    it('GET /api/listings?q=%00 and search_services with a NUL', async () => {
      const get = await app.api.get('/api/listings?q=%00');
      expectRefused(get, /q/);
      expectRefused(await app.api.call('search_services', { q: 'jest\u0000' }), /q/);
    });

    it('NULs in requirements, message bodies, reasons, comments and report fields', async () => {
      const listing = await newListing(app, seller);
      expectRefused(await app.api.call('purchase_service', { listingId: listing.id, requirements: { repo: 'x\u0000' } }, buyer.apiKey), /requirements\.repo/);
      expectRefused(await app.api.call('purchase_service', { listingId: 'lst_\u0000abc' }, buyer.apiKey), /listingId/);
      const { purchase } = await app.api.ok('purchase_service', { listingId: listing.id }, buyer.apiKey);
      expectRefused(await app.api.call('send_message', { purchaseId: purchase.id, body: 'hi\u0000' }, buyer.apiKey), /body/);
      expectRefused(await app.api.call('dispute_purchase', { purchaseId: purchase.id, reason: 'no delivery at all \u0000' }, buyer.apiKey), /reason/);
      expectRefused(await app.api.call('report_bug', { title: 'Bug', description: 'Something \u0000 broke here', context: { error: '\u0000' } }, buyer.apiKey), /description|context/);
      expectRefused(await app.api.call('rate_purchase', { purchaseId: purchase.id, rating: 5, comment: '\u0000' }, buyer.apiKey), /comment/);
      const { messages } = await app.api.ok('list_messages', { purchaseId: purchase.id }, buyer.apiKey);
      expect(messages).toEqual([]);
    });

    it('a NUL in the tool name is unknown_tool, and the request log still records the call', async () => {
      const r = await post(app, '{"tool":"who\\u0000ami\\ud800","arguments":{}}', { 'x-request-id': 'nul-tool-name-0001' });
      expect({ status: r.status, code: r.body.error.code }).toEqual({ status: 400, code: 'unknown_tool' });
      const entry = await app.call('gateway.requestLog', { requestId: 'nul-tool-name-0001' });
      expect(entry).toMatchObject({ requestId: 'nul-tool-name-0001', status: 400, errorCode: 'unknown_tool', tool: 'who\ufffdami\ufffd' });
    });

    it('a lone UTF-16 surrogate (as a JSON escape) in a value or a key', async () => {
      const r1 = await post(app, '{"tool":"register","arguments":{"provider":"cursor","displayName":"a\\ud800b"}}');
      expectRefused(r1, /displayName/);
      const listing = await newListing(app, seller);
      const r2 = await post(app, `{"tool":"purchase_service","arguments":{"listingId":"${listing.id}","requirements":{"\\udc00":"x"}}}`, { authorization: `Bearer ${buyer.apiKey}` });
      expectRefused(r2, /requirements/);
      const { purchases } = await app.api.ok('list_orders', { role: 'buyer', limit: 100 }, buyer.apiKey);
      expect(purchases.filter((p: any) => p.listingId === listing.id)).toEqual([]);
    });
  });

  describe('deep nesting, huge numbers, search operators, empty referredBy, long Idempotency-Key, corrupt bodies', () => {
    it('JSON nested 5,000 and 20,000 levels in delivery, requirements, deliverableSchema and context', async () => {
      const listing = await newListing(app, seller);
      const call = (tool: string, argsJson: string, apiKey: string) =>
        post(app, `{"tool":"${tool}","arguments":${argsJson}}`, { authorization: `Bearer ${apiKey}` });
      for (const depth of [5000, 20_000]) {
        expectRefused(await call('purchase_service', `{"listingId":"${listing.id}","requirements":${nestedJson(depth)}}`, buyer.apiKey), /requirements.*32|32.*requirements/);
        expectRefused(await call('deliver_work', `{"purchaseId":"pur_x1234","delivery":{"summary":"s","more":${nestedJson(depth)}}}`, seller.apiKey), /delivery/);
        expectRefused(await call('ask_help', `{"question":"why?","context":${nestedJson(depth)}}`, buyer.apiKey), /context/);
        expectRefused(await call('update_service', `{"listingId":"${listing.id}","deliverableSchema":${nestedJson(depth, '{"type":"string"}')}}`, listing.seller.apiKey), /deliverableSchema/);
        expectRefused(await call('report_bug', `{"title":"Deep","description":"A deeply nested context","context":${nestedJson(depth)}}`, buyer.apiKey), /context/);
      }
      // 32 levels are fine.
      const ok = await app.api.call('purchase_service', { listingId: listing.id, requirements: nested(30) as any }, buyer.apiKey);
      expect(ok.status).toBe(200);
    });

    it('minPriceGas / maxPriceGas of 1e20, 2^53+1 and 1e308', async () => {
      for (const n of ['1e20', String(2 ** 53 + 1), '1e308', '-1']) {
        expectRefused(await post(app, `{"tool":"search_services","arguments":{"maxPriceGas":${n}}}`), /maxPriceGas/);
        expectRefused(await post(app, `{"tool":"search_services","arguments":{"minPriceGas":${n}}}`), /minPriceGas/);
      }
      expectRefused(await app.api.get('/api/listings?maxPriceGas=100000000000000000000'), /maxPriceGas/);
    });

    it('33+ "-" operators, nested quotes and tsquery syntax in a search never make PostgreSQL fail', async () => {
      for (const q of [`${'-'.repeat(40)}x`, Array(60).fill('-x').join(' '), '"a" "b" -"c d" or or or', '!!!(a|b)&c:* <-> \\', '"'.repeat(99), 'or', '-']) {
        const r = await app.api.call('search_services', { q });
        expect(r.status).toBe(200);
        expect(Array.isArray(r.body.result.listings)).toBe(true);
      }
      expect((await app.api.get(`/api/listings?q=${encodeURIComponent('-'.repeat(100) + 'jest')}`)).status).toBe(200);
    });

    it('referredBy: "" → 400 naming referredBy', async () => {
      const r = await post(app, JSON.stringify({ provider: 'cursor', displayName: 'Ref', referredBy: '' }), {}, '/api/agent/register');
      expectRefused(r, /referredBy/);
    });

    it('an Idempotency-Key of 3,000 characters → 400, nothing held', async () => {
      const listing = await newListing(app, seller);
      const before = await wallet(app, buyer);
      const r = await app.api.call('purchase_service', { listingId: listing.id }, buyer.apiKey, { 'idempotency-key': 'k'.repeat(3000) });
      expectRefused(r, /Idempotency-Key/);
      expect(await wallet(app, buyer)).toMatchObject({ gasBalance: before.gasBalance, heldGas: before.heldGas });
      expectRefused(await app.api.call('report_experience', { rating: 5, idempotencyKey: 'x'.repeat(256) }, buyer.apiKey), /idempotencyKey/);
    });

    it('a corrupt gzip, deflate or br body → 400 invalid_arguments', async () => {
      const good = zlib.gzipSync(Buffer.from('{"tool":"whoami"}'));
      for (const [encoding, body] of [
        ['gzip', Buffer.concat([good.subarray(0, 12), Buffer.from('garbage-garbage')])],
        ['deflate', Buffer.from('not deflate at all')],
        ['br', Buffer.from([0xff, 0xff, 0xff, 0x00, 0x13])],
      ] as const) {
        const r = await post(app, body, { 'content-encoding': encoding });
        expect({ encoding, status: r.status, code: r.body.error.code }).toEqual({ encoding, status: 400, code: 'invalid_arguments' });
      }
      const ok = await post(app, good, { 'content-encoding': 'gzip' });
      expect(ok.body.error.code).toBe('unauthorized'); // parsed fine: whoami needs a key
    });
  });

  describe('strict arguments', () => {
    it('search_services {"query": "x"} → 400 naming q', async () => {
      const r = await app.api.call('search_services', { query: 'x' });
      expectRefused(r, /"q"/);
      expect(r.body.error!.details.unknown).toEqual(['query']);
      expect(r.body.error!.details.didYouMean).toEqual({ query: 'q' });
    });

    it('maxPrice → maxPriceGas, and several unknown names at once', async () => {
      const r = await app.api.call('search_services', { q: 'x', maxPrice: 5, colour: 'red' });
      expect(r.status).toBe(400);
      expect(r.body.error!.details.unknown).toEqual(['maxPrice', 'colour']);
      expect(r.body.error!.details.didYouMean).toEqual({ maxPrice: 'maxPriceGas' });
      expect(r.body.error!.hint).toMatch(/maxPrice → maxPriceGas/);
    });

    it('idempotencyKey stays accepted on mutating tools only', async () => {
      const first = await app.api.call('report_experience', { rating: 4, idempotencyKey: 'exp-1' }, buyer.apiKey);
      expect(first.status).toBe(200);
      const again = await app.api.call('report_experience', { rating: 4, idempotencyKey: 'exp-1' }, buyer.apiKey);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      const read = await app.api.call('whoami', { idempotencyKey: 'exp-2' }, buyer.apiKey);
      expect(read.status).toBe(400);
      expect(read.body.error!.details.unknown).toEqual(['idempotencyKey']);
    });

    it('the published schemas say additionalProperties: false', async () => {
      const doc = await app.api.get('/api/agent');
      for (const t of doc.body.tools) expect(t.inputSchema.additionalProperties).toBe(false);
    });
  });

  describe('price guard', () => {
    it('the seller raises 100 → 9,000 after the buyer looked: 409 invalid_state with details.priceGas, nothing held', async () => {
      const listing = await newListing(app, seller, { priceGas: 100 });
      const { listings } = await app.api.ok('search_services', { sellerId: listing.seller.id, sort: 'newest', limit: 50 });
      const seen = listings.find((l: any) => l.id === listing.id);
      expect(seen.quote.purchaseWith).toEqual({ listingId: listing.id, maxPriceGas: 100 });
      await app.api.ok('update_service', { listingId: listing.id, priceGas: 9000 }, listing.seller.apiKey);
      const before = await wallet(app, buyer);
      const r = await app.api.call('purchase_service', { ...seen.quote.purchaseWith }, buyer.apiKey);
      expect(r.status).toBe(409);
      expect(r.body.error!.code).toBe('invalid_state');
      expect(r.body.error!.details).toMatchObject({ priceGas: 9000, maxPriceGas: 100 });
      expect(await wallet(app, buyer)).toMatchObject({ gasBalance: before.gasBalance, heldGas: before.heldGas });
      const { purchases } = await app.api.ok('list_orders', { role: 'buyer', limit: 100 }, buyer.apiKey);
      expect(purchases.filter((p: any) => p.listingId === listing.id)).toEqual([]);
      // At (or above) the current price it goes through.
      const ok = await app.api.call('purchase_service', { listingId: listing.id, maxPriceGas: 9000 }, buyer.apiKey);
      expect(ok.status).toBe(200);
      expect(ok.body.result.purchase.priceGas).toBe(9000);
    });
  });

  describe('idempotency fingerprints use canonical JSON', () => {
    it('the same arguments with keys in another order replay the first result', async () => {
      const listing = await newListing(app, seller);
      const headers = { 'idempotency-key': `order-${Date.now()}` };
      const a = await post(app, JSON.stringify({ tool: 'purchase_service', arguments: { listingId: listing.id, requirements: { a: 1, b: { c: 2, d: 3 } } } }), { authorization: `Bearer ${buyer.apiKey}`, ...headers });
      const b = await post(app, JSON.stringify({ tool: 'purchase_service', arguments: { requirements: { b: { d: 3, c: 2 }, a: 1 }, listingId: listing.id } }), { authorization: `Bearer ${buyer.apiKey}`, ...headers });
      expect(a.status).toBe(200);
      expect(b.status).toBe(200);
      expect(b.headers.get('idempotent-replayed')).toBe('true');
      expect(b.body.result.purchase.id).toBe(a.body.result.purchase.id);
    });
  });

  describe('headers', () => {
    it('X-Content-Type-Options: nosniff on every response', async () => {
      for (const path of ['/api/agent', '/healthz', '/nope', '/llms.txt', '/api/listings?q=x', '/metrics']) {
        const r = await app.api.get(path);
        expect({ path, nosniff: r.headers.get('x-content-type-options') }).toEqual({ path, nosniff: 'nosniff' });
      }
      const p = await post(app, '{"tool":');
      expect(p.headers.get('x-content-type-options')).toBe('nosniff');
    });
  });
});

describe('hardening: authentication throttles, TRUST_PROXY, metrics, logs (embedded)', () => {
  const ADMIN_TOKEN = 'a'.repeat(16) + 'B'.repeat(16) + '0123';
  const METRICS_TOKEN = 'metrics-token-for-the-test-123456';
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { ADMIN_TOKEN, METRICS_TOKEN, RATE_LIMIT_PER_MINUTE: '3' } });
  });
  afterAll(async () => {
    await app.stop();
  });

  it('in production ADMIN_TOKEN must be ≥ 32 characters (refuses to start otherwise)', () => {
    const prod = { NODE_ENV: 'production', STRIPE_SECRET_KEY: 'sk_test_x', STRIPE_WEBHOOK_SECRET: 'whsec_x' };
    expect(() => loadConfig({ ...prod, ADMIN_TOKEN: 'x'.repeat(13) })).toThrow(ConfigError);
    expect(() => loadConfig({ ...prod, ADMIN_TOKEN: 'x'.repeat(31) })).toThrow(/at least 32/);
    expect(loadConfig({ ...prod, ADMIN_TOKEN: 'x'.repeat(32) }).adminToken).toHaveLength(32);
    expect(loadConfig({ ADMIN_TOKEN: 'short' }).adminToken).toBe('short'); // development: allowed
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8' }).trustProxy).toEqual(['loopback', '10.0.0.0/8']);
    expect(() => loadConfig({ TRUST_PROXY: 'not a proxy' })).toThrow(ConfigError);
  });

  it('/metrics needs METRICS_TOKEN and shows HTTP status/latency per tool and business figures', async () => {
    const none = await app.api.get('/metrics');
    expect(none.status).toBe(401);
    const { apiKey } = await app.api.register('Metrics Probe').catch(() => ({ apiKey: null as any }));
    if (apiKey) await app.api.call('whoami', {}, apiKey);
    const r = await app.api.get('/metrics', { authorization: `Bearer ${METRICS_TOKEN}` });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/text\/plain/);
    expect(r.text).toMatch(/market_http_requests_total\{tool="register",status="\d+"\}/);
    expect(r.text).toMatch(/market_http_request_duration_seconds_bucket\{tool="register",le="[^"]+"\}/);
    expect(r.text).toMatch(/market_gas_credited_total \d+/);
    expect(r.text).toMatch(/market_settlement_lag_seconds \d+/);
    expect(r.text).not.toMatch(/hostname|os_/);
  });

  it('20 wrong admin tokens: 401 ten times, then 429 with Retry-After; the right token still passes; each failure logged', async () => {
    const warn = jest.spyOn((app.broker.getLocalService('gateway') as any).logger, 'warn');
    const statuses: number[] = [];
    let last: Response | null = null;
    for (let i = 0; i < 20; i++) {
      last = await fetch(`${app.baseUrl}/api/admin/ping`, { headers: { authorization: `Bearer wrong-${i}` } });
      statuses.push(last.status);
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.slice(10)).toEqual(Array(10).fill(429));
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await last!.json()) as any).error.code).toBe('rate_limited');
    // Others' failures from the same address never lock the right token out (issue #23).
    const right = await fetch(`${app.baseUrl}/api/admin/ping`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(right.status).toBe(200);
    const logged = warn.mock.calls.filter((c) => (c[0] as any)?.authFailure === 'admin');
    expect(logged).toHaveLength(20);
    expect(JSON.stringify(logged)).not.toContain('wrong-');
    warn.mockRestore();
  });

  it('invalid API keys are throttled the same way', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      // A different client address per test is not possible from loopback: use X-Forwarded-For with TRUST_PROXY off → same client.
      const r = await app.api.call('report_experience', { rating: 5 }, `rk_live_${'x'.repeat(30)}${i}`, { 'x-forwarded-for': `203.0.113.${i}` });
      statuses.push(r.status);
      if (r.status === 429) expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.slice(10)).toEqual([429, 429]);
  });

  it('11 random keys from one address, then a valid key from that address → 200 (issue #23: nobody can lock every agent out)', async () => {
    const { apiKey } = await app.api.register('Locked Out?');
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await app.api.call('wallet', {}, `rk_live_${'y'.repeat(30)}${i}`)).status);
    expect(statuses.slice(-1)).toEqual([429]);
    const r = await app.api.call('wallet', {}, apiKey);
    expect(r.status).toBe(200);
    // The throttled address is still slowed for wrong keys.
    expect((await app.api.call('wallet', {}, `rk_live_${'y'.repeat(30)}z`)).status).toBe(429);
  });

  it('X-Forwarded-For does not count with TRUST_PROXY off (the per-IP limit holds from localhost)', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await post(app, JSON.stringify({ provider: 'cursor', displayName: `Spoof ${i}` }), { 'x-forwarded-for': `198.51.100.${i}` }, '/api/agent/register');
      statuses.push(r.status);
    }
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(2);
  });

  it('one access-log line per request with request id, tool, agent id, status and duration — never the key', async () => {
    const info = jest.spyOn(app.broker.logger, 'info');
    const r = await app.api.call('whoami', {}, `rk_live_${'y'.repeat(32)}`, { 'x-request-id': 'access-log-test-1' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const lines = info.mock.calls.filter((c) => (c[0] as any)?.access && (c[0] as any).requestId === 'access-log-test-1');
    expect(lines).toHaveLength(1);
    expect(lines[0][0]).toMatchObject({ requestId: 'access-log-test-1', tool: 'whoami', agentId: null, status: r.status, method: 'POST', path: '/api/agent' });
    expect(typeof (lines[0][0] as any).durationMs).toBe('number');
    expect(JSON.stringify(lines)).not.toContain('rk_live_');
    info.mockRestore();
  });
});

describe('hardening: METRICS_PORT listens on loopback only', () => {
  it('serves the registry on 127.0.0.1 without the gateway token', async () => {
    const port = await freePort();
    const app = await startTestApp({ env: { METRICS_PORT: String(port) } });
    try {
      expect(app.config.metricsHost).toBe('127.0.0.1');
      await app.api.get('/api/agent');
      const body = await new Promise<string>((resolve, reject) => {
        http.get({ host: '127.0.0.1', port, path: '/metrics' }, (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve(text));
        }).on('error', reject);
      });
      expect(body).toMatch(/market_http_requests_total\{tool="GET \/api\/agent",status="200"\} 1/);
      // Without METRICS_TOKEN the gateway port does not serve it.
      expect((await app.api.get('/metrics')).status).toBe(404);
    } finally {
      await app.stop();
    }
  });
});

describe('hardening: a 5xx is logged at error with its cause and stack', () => {
  it('a real failure (the listings store closed under it) → 500 envelope, error log with err.stack', async () => {
    const app = await startTestApp();
    try {
      const error = jest.spyOn(app.broker.logger, 'error');
      const listings = app.broker.getLocalService('listings') as any;
      await listings.db.query('DROP TABLE listings.listings CASCADE'); // a real failure, not a stand-in
      const r = await app.api.call('search_services', { q: 'jest' }, null, { 'x-request-id': 'forced-5xx-0001' });
      expect(r.status).toBeGreaterThanOrEqual(500);
      expect(r.body.ok).toBe(false);
      const logged = error.mock.calls.find((c) => (c[0] as any)?.requestId === 'forced-5xx-0001');
      expect(logged).toBeTruthy();
      const entry = logged![0] as any;
      expect(entry.tool).toBe('search_services');
      expect(entry.err).toBeInstanceOf(Error);
      expect(String(entry.err.stack)).toMatch(/\n\s+at /);
      error.mockRestore();
    } finally {
      await app.stop().catch(() => undefined);
    }
  });
});
