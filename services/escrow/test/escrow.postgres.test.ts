/**
 * Races on real PostgreSQL (PGlite is one connection, so races there prove nothing):
 * 50 purchases at once against a balance for 3, racing confirmations, concurrent same-key purchases,
 * two sweepers at once.
 */
import { describeWithPostgres, startTestApp, type TestApp } from '../../../test/kit';
import { gasAddsUp, scenario, wallet } from './helpers';
import { expectLedgerClean } from '../../../test/kit/ledger';

describeWithPostgres('escrow races on PostgreSQL', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ postgres: true });
  });
  afterAll(async () => {
    await app?.stop();
  });
  afterEach(async () => {
    await expectLedgerClean(app);
  });

  test('one buyer fires 50 purchases at once against a balance for 3 → exactly 3 held, 47 refused', async () => {
    const s = await scenario(app, { fundedGas: 3 * 250 + 100 });
    const results = await Promise.all(
      Array.from({ length: 50 }, () => app.api.call('purchase_service', { listingId: s.listingId }, s.buyer.apiKey)),
    );
    const okCount = results.filter((r) => r.status === 200).length;
    const refused = results.filter((r) => r.status === 402 && r.body.error?.code === 'insufficient_gas').length;
    expect(okCount).toBe(3);
    expect(refused).toBe(47);
    expect(await wallet(app, s.buyer)).toMatchObject({ gasBalance: 100, heldGas: 750 });
    const held = (await app.api.ok('list_orders', { status: 'awaiting_delivery', limit: 100 }, s.buyer.apiKey)).purchases;
    expect(held).toHaveLength(3);
    const failed = (await app.api.ok('list_orders', { status: 'failed', limit: 100 }, s.buyer.apiKey)).purchases;
    expect(failed).toHaveLength(47);
    await gasAddsUp(app, s);
    for (const p of held) await app.api.ok('request_refund', { purchaseId: p.id }, s.buyer.apiKey);
    expect(await wallet(app, s.buyer)).toMatchObject({ gasBalance: 850, heldGas: 0 });
  });

  test('racing confirmations settle once', async () => {
    const s = await scenario(app);
    const { purchase } = await app.api.ok('purchase_service', { listingId: s.listingId }, s.buyer.apiKey);
    await app.api.ok('deliver_work', { purchaseId: purchase.id, delivery: { summary: 'done' } }, s.seller.apiKey);
    const results = await Promise.all(
      Array.from({ length: 10 }, () => app.api.call('confirm_delivery', { purchaseId: purchase.id }, s.buyer.apiKey)),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409 && r.body.error?.code === 'invalid_state')).toHaveLength(9);
    expect(await wallet(app, s.seller)).toMatchObject({ gasBalance: 225, lifetimeEarnedGas: 225 });
    await gasAddsUp(app, s);
  });

  test('confirm racing a seller refund: exactly one wins and the money follows it', async () => {
    const s = await scenario(app);
    const { purchase } = await app.api.ok('purchase_service', { listingId: s.listingId }, s.buyer.apiKey);
    await app.api.ok('deliver_work', { purchaseId: purchase.id, delivery: { summary: 'done' } }, s.seller.apiKey);
    const [c, r] = await Promise.all([
      app.api.call('confirm_delivery', { purchaseId: purchase.id }, s.buyer.apiKey),
      app.api.call('request_refund', { purchaseId: purchase.id }, s.seller.apiKey),
    ]);
    expect([c.status, r.status].sort()).toEqual([200, 409]);
    const final = (await app.api.ok('get_purchase', { purchaseId: purchase.id }, s.buyer.apiKey)).purchase.status;
    expect(final).toBe(c.status === 200 ? 'completed' : 'refunded');
    await gasAddsUp(app, s);
  });

  test('the same Idempotency-Key 10 times at once (gateway bypassed) → one purchase, one hold', async () => {
    const s = await scenario(app);
    const meta = { agent: { id: s.buyer.id, displayName: 'Buyer', provider: 'claude_code' }, idempotencyKey: 'same-key' };
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () => app.call<any>('escrow.purchase', { listingId: s.listingId }, meta)),
    );
    const ids = new Set(results.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<any>).value.purchase.id));
    expect(ids.size).toBe(1);
    expect(await wallet(app, s.buyer)).toMatchObject({ gasBalance: 750, heldGas: 250 });
    const all = (await app.api.ok('list_orders', { limit: 100 }, s.buyer.apiKey)).purchases;
    expect(all).toHaveLength(1);
    await app.api.ok('request_refund', { purchaseId: all[0].id }, s.buyer.apiKey);
  });

  test('two sweepers at once release each due purchase once', async () => {
    const s = await scenario(app, { fundedGas: 250 * 12 });
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const { purchase } = await app.api.ok('purchase_service', { listingId: s.listingId }, s.buyer.apiKey);
      await app.api.ok('deliver_work', { purchaseId: purchase.id, delivery: { summary: `done ${i}` } }, s.seller.apiKey);
      ids.push(purchase.id);
    }
    app.clock.advanceDays(4);
    const [a, b] = await Promise.all([app.call('escrow.sweep'), app.call('escrow.sweep')]);
    expect(a.released + b.released).toBe(12);
    expect(await wallet(app, s.seller)).toMatchObject({ gasBalance: 12 * 225 });
    await gasAddsUp(app, s);
  });
});
