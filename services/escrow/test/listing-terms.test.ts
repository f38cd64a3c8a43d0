/**
 * Issue #22: escrow buys on its own copy of a listing's terms, kept from listings' terms_changed events.
 * A change reaches the copy (the next purchase pays the new price), an older event never overwrites a
 * newer copy, and a copy that heard nothing for a while is asked of listings again. Ends with the audit.
 */
import { startTestApp, type TestApp } from '../../../test/kit';
import { expectLedgerClean } from '../../../test/kit/ledger';
import { LISTINGS_TOPICS } from '../../../packages/contracts/listings';
import { TERMS_FRESH_MS } from '../listing-terms';
import { scenario, wallet } from './helpers';

describe('escrow keeps a copy of listings\' buying terms', () => {
  let app: TestApp;
  const escrow = () => app.broker.getLocalService('escrow') as unknown as { db: { query: <T>(sql: string, p?: unknown[]) => Promise<{ rows: T[] }> } };
  const copyOf = async (listingId: string) =>
    (await escrow().db.query<{ price_gas: number; status: string; terms_version: string; refreshed_at: Date }>('SELECT * FROM escrow.listing_terms WHERE listing_id = $1', [listingId])).rows[0];

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.stop();
  });
  afterEach(async () => {
    await expectLedgerClean(app);
  });

  test('a price change reaches the copy: the next purchase pays the new price, the one before keeps its own', async () => {
    const s = await scenario(app);
    const first = (await app.api.ok('purchase_service', { listingId: s.listingId }, s.buyer.apiKey)).purchase;
    const before = await copyOf(s.listingId);
    expect(Number(before.price_gas)).toBe(250);
    await app.api.ok('update_service', { listingId: s.listingId, priceGas: 300 }, s.seller.apiKey);
    const after = await copyOf(s.listingId);
    expect(Number(after.price_gas)).toBe(300);
    expect(Number(after.terms_version)).toBeGreaterThan(Number(before.terms_version));
    const second = (await app.api.ok('purchase_service', { listingId: s.listingId }, s.buyer.apiKey)).purchase;
    expect([first.priceGas, second.priceGas]).toEqual([250, 300]);
    expect(await wallet(app, s.buyer)).toMatchObject({ gasBalance: 1000 - 550, heldGas: 550 });
    await app.api.ok('request_refund', { purchaseId: first.id }, s.buyer.apiKey);
    await app.api.ok('request_refund', { purchaseId: second.id }, s.buyer.apiKey);
    expect(await wallet(app, s.buyer)).toMatchObject({ gasBalance: 1000, heldGas: 0 });
  });

  test('an event older than the copy changes nothing (redelivered or out of order)', async () => {
    const s = await scenario(app);
    await app.api.ok('update_service', { listingId: s.listingId, priceGas: 320 }, s.seller.apiKey);
    const copy = await copyOf(s.listingId);
    const stale = { id: s.listingId, sellerId: s.seller.id, title: 'old', priceGas: 10, status: 'active', termsVersion: Number(copy.terms_version) - 1 };
    const event = { eventId: `listings:test-${s.listingId}`, topic: LISTINGS_TOPICS.termsChanged, occurredAt: new Date().toISOString(), data: stale };
    await (app.broker as unknown as { sendToChannel(topic: string, event: unknown): Promise<void> }).sendToChannel(LISTINGS_TOPICS.termsChanged, event);
    expect(Number((await copyOf(s.listingId)).price_gas)).toBe(320);
    const p = (await app.api.ok('purchase_service', { listingId: s.listingId }, s.buyer.apiKey)).purchase;
    expect(p.priceGas).toBe(320);
    await app.api.ok('request_refund', { purchaseId: p.id }, s.buyer.apiKey);
  });

  test('a copy that heard nothing for a while is asked of listings again before a purchase', async () => {
    const s = await scenario(app);
    await app.api.ok('purchase_service', { listingId: s.listingId }, s.buyer.apiKey);
    // Pretend the last news is old and wrong (as if an event had been lost): the purchase asks listings.
    await escrow().db.query(`UPDATE escrow.listing_terms SET price_gas = 11, refreshed_at = refreshed_at - make_interval(secs => $2) WHERE listing_id = $1`, [
      s.listingId,
      TERMS_FRESH_MS / 1000 + 1,
    ]);
    const p = (await app.api.ok('purchase_service', { listingId: s.listingId }, s.buyer.apiKey)).purchase;
    expect(p.priceGas).toBe(250);
    expect(Number((await copyOf(s.listingId)).price_gas)).toBe(250);
    for (const o of (await app.api.ok('list_orders', { role: 'buyer' }, s.buyer.apiKey)).purchases) await app.api.ok('request_refund', { purchaseId: o.id }, s.buyer.apiKey);
    expect(await wallet(app, s.buyer)).toMatchObject({ gasBalance: 1000, heldGas: 0 });
  });
});
