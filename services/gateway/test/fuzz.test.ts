/**
 * Property-based fuzzing of the whole public surface (fast-check), embedded, through real HTTP:
 * every tool of the catalogue and every public GET, with wrong types, boundary numbers, NUL bytes,
 * lone surrogates, huge strings, deep nesting, unknown argument names and odd Idempotency-Keys.
 * Every answer must be the envelope with a status below 500 (a 4xx for bad input), every response
 * carries nosniff and its request id, and the ledger audit stays clean at the end.
 * The case count is printed (and fixed by FUZZ_RUNS_PER_TOOL / FUZZ_GET_RUNS / FUZZ_SEED).
 */
import fc from 'fast-check';
import { STATUS_BY_CODE } from '../../../packages/errors';
import { TOOLS, type ToolDefinition } from '../../../packages/tool-catalogue';
import { startTestApp, TEST_DATABASE_URL, type TestApp } from '../../../test/kit';
import { creditGas, expectLedgerClean } from '../../../test/kit/ledger';
import { newAgent, newListing, type TestAgent } from '../../escrow/test/helpers';

// Starting the embedded app and running hundreds of HTTP cases can take minutes on a shared 2-core machine.
jest.setTimeout(240_000);

const RUNS_PER_TOOL = Number(process.env.FUZZ_RUNS_PER_TOOL ?? 12);
const GET_RUNS = Number(process.env.FUZZ_GET_RUNS ?? 80);
const RAW_RUNS = Number(process.env.FUZZ_RAW_RUNS ?? 40);
const SEARCH_RUNS = Number(process.env.FUZZ_SEARCH_RUNS ?? 60);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;

function nested(depth: number): unknown {
  let v: unknown = 'deep';
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { n: v };
  return v;
}

const nastyString = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\ud83d',
  '\u202eevil',
  '%00',
  `${'-'.repeat(40)}x`,
  Array(40).fill('-x').join(' '),
  '"'.repeat(9),
  '!!(a|b)&c:* <-> \\',
  "'; DROP TABLE escrow.purchases; --",
  '<script>alert(1)</script>',
  'rk_live_00000000000000000000000000',
  'agt_0000000000000000000000',
  '🙂🙂🙂',
  '\n\r\t',
  'x'.repeat(5000),
  'y'.repeat(70_000),
);
const text = fc.oneof(nastyString, fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 24 }));
const boundaryNumber = fc.oneof(
  fc.constantFrom(0, -0, -1, 1, 1.5, 9, 10, 50, 250, 2 ** 31, 2 ** 53, 2 ** 53 + 2, 1e20, 1e308, -1e308, 5e-324, Number.MAX_SAFE_INTEGER),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
const leaf = fc.oneof(text, boundaryNumber, fc.boolean(), fc.constant(null));
const value: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: leaf },
  { weight: 1, arbitrary: fc.array(leaf, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), leaf, { maxKeys: 4 }) },
  { weight: 1, arbitrary: fc.constantFrom(31, 33, 200, 3000).map(nested) },
);
const unknownName = fc.oneof(fc.constantFrom('query', 'maxPrice', 'price', 'extra', '__proto__', 'constructor', 'a\u0000b', '\ud800'), fc.string({ minLength: 1, maxLength: 12 }));
const idempotencyKey = fc.oneof(
  { weight: 3, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 40 }) },
  { weight: 1, arbitrary: fc.constantFrom('k'.repeat(256), 'k'.repeat(3000), ' ', 'same-key') },
);

interface Pools {
  listingIds: string[];
  purchaseIds: string[];
  agentIds: string[];
}

/** Values that are valid-looking for an argument, so fuzzing also reaches the services behind the schema. */
function plausible(name: string, rule: any, pools: Pools): fc.Arbitrary<unknown> {
  if (name === 'listingId') return fc.constantFrom(...pools.listingIds, 'lst_missing0000000000000');
  if (name === 'purchaseId') return fc.constantFrom(...pools.purchaseIds, 'pur_missing0000000000000');
  if (name === 'referredBy' || name === 'sellerId') return fc.constantFrom(...pools.agentIds);
  if (rule?.type === 'enum') return fc.constantFrom(...(rule.values as string[]));
  if (rule?.type === 'number') return fc.integer({ min: rule.min ?? -5, max: Math.min(rule.max ?? 2000, 2000) });
  if (rule?.type === 'object') return fc.constantFrom({ summary: 'Delivered: tests and a report.' }, { type: 'object' }, {});
  return fc.string({ minLength: 0, maxLength: 60 });
}

function argumentsFor(tool: ToolDefinition, pools: Pools): fc.Arbitrary<unknown> {
  const names = Object.keys(tool.params).filter((k) => !k.startsWith('$$'));
  const known = fc.record(
    Object.fromEntries(names.map((n) => [n, fc.oneof({ weight: 2, arbitrary: plausible(n, tool.params[n], pools) }, { weight: 1, arbitrary: value })])),
    { requiredKeys: [] },
  );
  const withUnknown = fc.tuple(known, fc.dictionary(unknownName, value, { maxKeys: 2 })).map(([k, u]) => ({ ...u, ...(k as object) }));
  return fc.oneof({ weight: 5, arbitrary: known }, { weight: 2, arbitrary: withUnknown }, { weight: 1, arbitrary: value });
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

/** The envelope contract: 2xx ok:true, 4xx ok:false with a known code whose status matches, request id = header. */
function expectEnvelope(what: string, r: Answer, json = true, okOnSuccess = true): void {
  const context = `${what.slice(0, 300)} → ${r.status} ${r.text.slice(0, 300)}`;
  if (r.status >= 500) throw new Error(`5xx: ${context}`);
  // 431: Node's HTTP parser refuses a request line/headers over 16 KB before the app sees it (no app headers).
  if (r.status === 431) return;
  if (r.headers.get('x-content-type-options') !== 'nosniff') throw new Error(`no nosniff: ${context}`);
  if (!json || !(r.headers.get('content-type') ?? '').includes('json')) return;
  const body = JSON.parse(r.text);
  if (r.status < 300) {
    if (okOnSuccess && body.ok !== true) throw new Error(`2xx without ok:true: ${context}`);
    return;
  }
  if (r.status < 400) return;
  const code = body?.error?.code as keyof typeof STATUS_BY_CODE;
  if (body.ok !== false || typeof body.error?.message !== 'string' || !(code in STATUS_BY_CODE)) throw new Error(`not the envelope: ${context}`);
  if (STATUS_BY_CODE[code] !== r.status && !(r.status === 413 && code === 'invalid_arguments')) throw new Error(`status/code mismatch: ${context}`);
  if (body.requestId !== r.headers.get('x-request-id')) throw new Error(`requestId differs from x-request-id: ${context}`);
}

function fuzzSuite(store: 'embedded' | 'postgres', scale: number): void {
describe(`fuzz: every tool and public GET answers a 4xx envelope, never a 5xx (${store})`, () => {
  let app: TestApp;
  let buyer: TestAgent;
  let seller: TestAgent;
  let pools: Pools;
  let cases = 0;
  const runs = (n: number) => Math.max(1, Math.round(n * scale));

  beforeAll(async () => {
    app = await startTestApp({ postgres: store === 'postgres', env: { AUTH_FAILURES_PER_MINUTE: '1000000' } });
    [buyer, seller] = await Promise.all([newAgent(app, 'Fuzz Buyer'), newAgent(app, 'Fuzz Seller')]);
    await creditGas(app, buyer.id, 5000, 'fleet');
    const listing = await newListing(app, seller);
    const { purchase } = await app.api.ok('purchase_service', { listingId: listing.id }, buyer.apiKey);
    pools = { listingIds: [listing.id], purchaseIds: [purchase.id], agentIds: [buyer.id, seller.id] };
  });
  afterAll(async () => {
    console.log(`fuzz (${store}): ${cases} cases (${runs(RUNS_PER_TOOL)} per tool × ${TOOLS.length} tools, ${runs(GET_RUNS)} public GETs, ${runs(RAW_RUNS)} raw bodies, ${runs(SEARCH_RUNS)} search texts)`);
    await app.stop();
  });

  async function send(tool: string, args: unknown, key: string | null, idemKey: string | undefined): Promise<Answer> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (key) headers.authorization = `Bearer ${key}`;
    if (idemKey !== undefined) headers['idempotency-key'] = idemKey;
    const body = JSON.stringify({ tool, arguments: args });
    const res = await fetch(`${app.baseUrl}/api/agent`, { method: 'POST', headers, body });
    return { status: res.status, headers: res.headers, text: await res.text() };
  }

  it.each(TOOLS.map((t) => [t.name, t] as const))('%s', async (_name, tool) => {
    const keyFor = fc.constantFrom<'buyer' | 'seller' | 'none' | 'bogus'>('buyer', 'buyer', 'seller', 'none', 'bogus');
    await fc.assert(
      fc.asyncProperty(argumentsFor(tool, pools), keyFor, idempotencyKey, async (args, who, idem) => {
        cases++;
        const key = { buyer: buyer.apiKey, seller: seller.apiKey, none: null, bogus: `rk_live_${'z'.repeat(32)}` }[who];
        const r = await send(tool.name, args, key, idem);
        expectEnvelope(`${tool.name} ${JSON.stringify(args)?.slice(0, 200)}`, r);
      }),
      { numRuns: runs(RUNS_PER_TOOL), seed: SEED, endOnFailure: true },
    );
  });

  it('public GETs', async () => {
    const param = fc.constantFrom('q', 'category', 'minPriceGas', 'maxPriceGas', 'sellerId', 'sort', 'limit', 'cursor', 'session_id', 'modules', 'junk');
    const queryValue = fc.oneof(
      text.map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, ''))),
      fc.constantFrom('%00', '%ff%fe', '%ED%A0%80', '1e308', '100000000000000000000', '-1', '9007199254740993', 'NaN', '%', '%zz', 'a&q=b'),
    );
    const query = fc.array(fc.tuple(param, queryValue), { maxLength: 4 }).map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&'));
    const path = fc.oneof(
      fc.constantFrom('/api/listings', '/api/public/stats', '/api/public/liquidity', '/api/public/info', '/api/public/llms', '/llms.txt', '/llms-full.txt',
        '/openapi.json', '/api/agent', '/healthz', '/readyz', '/checkout/done', '/checkout/cancelled', '/metrics', '/', '/api/admin/ping'),
      fc.constantFrom('/checkout/sandbox/', '/api/listings/', '/listings/', '/api/').chain((p) => text.map((s) => p + encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '')).slice(0, 200))),
    );
    await fc.assert(
      fc.asyncProperty(path, query, async (p, q) => {
        cases++;
        const url = `${app.baseUrl}${p}${q ? `?${q}` : ''}`;
        const res = await fetch(url);
        const r = { status: res.status, headers: res.headers, text: await res.text() };
        // Documents (openapi.json, discovery) are JSON but not the envelope; their errors are.
        expectEnvelope(`GET ${p}?${q}`.slice(0, 300), r, true, p.startsWith('/api/listings') || p.startsWith('/api/public/s') || p.startsWith('/api/public/l'));
      }),
      { numRuns: runs(GET_RUNS), seed: SEED, endOnFailure: true },
    );
  });

  it('raw bodies: not JSON, not an object, wrong encodings', async () => {
    const body = fc.oneof(
      fc.string({ maxLength: 50 }),
      fc.constantFrom('', 'null', '[]', '[{"tool":"whoami"}]', '"whoami"', '{"tool":5}', '{"tool":"whoami","arguments":[]}', '{"tool":"whoami","arguments":"x"}',
        '{"tool":"search_services","arguments":{"q":"\\u0000"}}', '{"tool":"register","arguments":{"displayName":"\\udc00"}}', `{"tool":"${'t'.repeat(10_000)}"}`,
        '{"__proto__":{"tool":"whoami"}}', '{"tool":"whoami","arguments":{"__proto__":{"x":1}}}'),
    );
    const contentType = fc.constantFrom('application/json', 'application/json; charset=utf-16', 'text/plain', 'application/x-www-form-urlencoded', 'application/vnd.api+json');
    const encoding = fc.constantFrom(undefined, 'gzip', 'deflate', 'br', 'identity', 'compress');
    const target = fc.constantFrom('/api/agent', '/api/agent/register', '/mcp');
    await fc.assert(
      fc.asyncProperty(body, contentType, encoding, target, async (b, ct, enc, to) => {
        cases++;
        const headers: Record<string, string> = { 'content-type': ct, accept: 'application/json, text/event-stream' };
        if (enc) headers['content-encoding'] = enc;
        const res = await fetch(`${app.baseUrl}${to}`, { method: 'POST', headers, body: b });
        const r = { status: res.status, headers: res.headers, text: await res.text() };
        expectEnvelope(`POST ${to} ${ct} ${enc ?? ''} ${b.slice(0, 100)}`, r, to !== '/mcp');
      }),
      { numRuns: runs(RAW_RUNS), seed: SEED, endOnFailure: true },
    );
  });

  it('search texts made of operators never make PostgreSQL fail', async () => {
    const token = fc.constantFrom('-', '--', '"', ' ', 'jest', 'tests', 'or', 'OR', '!', '|', '&', '(', ')', ':', '*', '<->', '<', '>', '\\', "'", '.', '/', 'and', 'not', 'é', '::');
    const q = fc.array(token, { maxLength: 120 }).map((t) => t.join(''));
    await fc.assert(
      fc.asyncProperty(q, async (text) => {
        cases++;
        const r = await send('search_services', { q: text }, null, undefined);
        expectEnvelope(`search_services q=${JSON.stringify(text)}`, r);
        if (text.length <= 200 && r.status !== 200) throw new Error(`search refused a query of ${text.length} characters: ${text} → ${r.text.slice(0, 300)}`);
      }),
      { numRuns: runs(SEARCH_RUNS), seed: SEED, endOnFailure: true },
    );
  });

  it('the ledger audit is clean after all of it', async () => {
    await expectLedgerClean(app);
  });
});
}

fuzzSuite('embedded', 1);
// The same properties on the real PostgreSQL (a fresh database), at a third of the runs.
if (TEST_DATABASE_URL) fuzzSuite('postgres', 1 / 3);
else describe.skip('fuzz (postgres): TEST_DATABASE_URL is not set', () => it('skipped', () => undefined));
