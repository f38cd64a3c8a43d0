/**
 * The call graph has layers, not a web (docs/architecture.md): a middleware in the test broker
 * records every caller → callee between services while a whole marketplace journey runs, and the
 * test fails when a service calls one at or above its own layer (or one the table does not allow).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Middleware } from 'moleculer';
import { startTestApp, type TestApp } from '../kit';
import { creditGas, expectLedgerClean } from '../kit/ledger';
import { newAgent, newListing } from '../../services/escrow/test/helpers';
import { ALLOWED_CALLS, forbiddenCalls, LAYERS } from './layers';

const current = new AsyncLocalStorage<string>();
const edges = new Set<string>();

type Fn = (...args: any[]) => any;
const within = (service: string, fn: Fn): Fn =>
  function (this: unknown, ...args: any[]) {
    return current.run(service, () => fn.apply(this, args));
  };

/** Runs every action handler, channel handler and `started` hook (timers, HTTP server) as "inside <service>". */
const CallGraphRecorder: Middleware = {
  name: 'CallGraphRecorder',
  serviceCreating(_service: unknown, schema: any) {
    const name = schema.name as string;
    if (Array.isArray(schema.started)) schema.started = schema.started.map((f: Fn) => within(name, f));
    else if (typeof schema.started === 'function') schema.started = within(name, schema.started);
    for (const ch of Object.values<any>(schema.channels ?? {})) {
      if (typeof ch === 'function') continue;
      if (typeof ch?.handler === 'function') ch.handler = within(name, ch.handler);
    }
  },
  localAction(next: Fn, action: any) {
    const name = action.service?.name as string;
    return (ctx: unknown) => current.run(name, () => next(ctx));
  },
  call(next: Fn) {
    return (actionName: string, params: unknown, opts: unknown) => {
      const caller = current.getStore();
      const callee = actionName.split('.')[0];
      if (caller && caller !== callee && caller !== '$node') edges.add(`${caller}->${callee}`);
      return next(actionName, params, opts);
    };
  },
} as Middleware;

const ADMIN_TOKEN = 'call-graph-admin-token-0123456789';

describe('service call graph', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ middlewares: [CallGraphRecorder], env: { ADMIN_TOKEN } });
  });
  afterAll(async () => {
    await app?.stop();
  });

  const admin = (method: string, path: string, body?: unknown) =>
    fetch(`${app.baseUrl}/api/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  it('the table itself is layered: every allowed callee is below its caller', () => {
    for (const [from, tos] of Object.entries(ALLOWED_CALLS)) {
      for (const to of tos) expect(LAYERS.indexOf(to)).toBeGreaterThan(LAYERS.indexOf(from as (typeof LAYERS)[number]));
    }
    expect(ALLOWED_CALLS.ledger).toEqual([]);
    // The checker catches an upward call and a sideways one.
    expect(forbiddenCalls(['ledger->escrow', 'agents->listings', 'escrow->ledger'])).toEqual(['agents->listings', 'ledger->escrow']);
  });

  it('a whole journey calls only down the layers', async () => {
    const api = app.api;
    const referrer = await newAgent(app, 'Referrer');
    const seller = await newAgent(app, 'Seller');
    const buyer = await newAgent(app, 'Buyer', { referredBy: referrer.id });
    await api.ok('buy_gas', { packId: 'starter' }, buyer.apiKey);
    await creditGas(app, buyer.id, 2000);
    const listing = await newListing(app, seller);
    await api.ok('search_services', { q: 'jest' }, buyer.apiKey);
    await app.api.get(`/listings/${listing.id}`);
    await app.api.get('/api/public/liquidity');

    // Purchase, delivery, messages, confirmation, rating.
    const p1 = (await api.ok('purchase_service', { listingId: listing.id }, buyer.apiKey, { 'idempotency-key': 'call-graph-1' })).purchase;
    await api.ok('ack_purchase', { purchaseId: p1.id }, seller.apiKey);
    await api.ok('send_message', { purchaseId: p1.id, body: 'Working on it.' }, seller.apiKey);
    await api.ok('list_messages', { purchaseId: p1.id }, buyer.apiKey);
    await api.ok('deliver_work', { purchaseId: p1.id, delivery: { summary: 'done' } }, seller.apiKey);
    await api.ok('get_delivery', { purchaseId: p1.id }, buyer.apiKey);
    await api.ok('confirm_delivery', { purchaseId: p1.id }, buyer.apiKey);
    await api.ok('rate_purchase', { purchaseId: p1.id, rating: 5 }, buyer.apiKey);

    // Refund, dispute and its resolution, sweepers.
    const p2 = (await api.ok('purchase_service', { listingId: listing.id }, buyer.apiKey)).purchase;
    await api.ok('request_refund', { purchaseId: p2.id, reason: 'changed my mind' }, buyer.apiKey);
    const p3 = (await api.ok('purchase_service', { listingId: listing.id }, buyer.apiKey)).purchase;
    await api.ok('dispute_purchase', { purchaseId: p3.id, reason: 'nothing was delivered at all' }, buyer.apiKey);
    expect((await admin('GET', '/disputes')).status).toBe(200);
    expect((await admin('POST', `/disputes/${p3.id}/resolve`, { outcome: 'release' })).status).toBe(200);
    await app.call('escrow.sweep');
    await app.call('payments.sweepCheckouts');

    // Reads, help, reports, cash-out.
    await api.ok('whoami', {}, seller.apiKey);
    await api.ok('wallet', {}, seller.apiKey);
    await api.ok('list_orders', {}, buyer.apiKey);
    const failed = await api.call('get_purchase', { purchaseId: 'pur_doesNotExist1' }, buyer.apiKey);
    await api.ok('ask_help', { question: 'Why did my call fail?', context: { requestId: failed.body.requestId } }, buyer.apiKey);
    await api.ok('report_bug', { title: 'A purchase I cannot find', description: 'get_purchase said not_found for it.', context: { requestId: failed.body.requestId } }, buyer.apiKey);
    await api.ok('connect_payouts', { btcAddress: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq' }, seller.apiKey);
    await api.call('request_cashout', {}, seller.apiKey);
    expect((await admin('GET', '/ledger/audit')).status).toBe(200);
    await expectLedgerClean(app);

    const seen = [...edges].sort();
    process.stdout.write(`service calls seen: ${seen.join(', ')}\n`);
    expect(seen.length).toBeGreaterThan(5);
    expect(forbiddenCalls(seen)).toEqual([]);
  });
});
