/**
 * Escrow's half of the money audit (escrow.auditHolds): its open purchases against the ledger's
 * pending holds. Escrow asks the ledger (one layer down); the ledger never asks escrow.
 */
import { startTestApp, type TestApp } from '../../../test/kit';
import { expectLedgerClean } from '../../../test/kit/ledger';
import { scenario } from './helpers';

describe('escrow.auditHolds', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.stop();
  });

  const check = async (name: string) => ((await app.call('escrow.auditHolds')) as any[]).find((c) => c.name === name);

  it('passes when holds and open purchases agree, and flags either side going wrong', async () => {
    const s = await scenario(app);
    const p1 = (await app.api.ok('purchase_service', { listingId: s.listingId }, s.buyer.apiKey)).purchase.id;
    const p2 = (await app.api.ok('purchase_service', { listingId: s.listingId }, s.buyer.apiKey)).purchase.id;
    const clean = (await app.call('escrow.auditHolds')) as any[];
    expect(clean.filter((c) => !c.ok || c.skipped)).toEqual([]);

    // A hold no purchase of escrow knows about: an orphan (after the re-check pause).
    const ghost = 'pur_ghostHold0001';
    await app.call('ledger.hold', { key: `purchase:${ghost}:hold`, purchaseId: ghost, buyerId: s.buyer.id, sellerId: s.seller.id, amountGas: 100 });
    expect(await check('pending_holds_belong_to_open_purchases')).toMatchObject({ ok: false, details: { purchaseIds: [ghost] } });
    await app.call('ledger.void', { key: `purchase:${ghost}:void`, purchaseId: ghost });

    // Escrow thinks p2 is funded but its hold was voided behind its back.
    await app.call('ledger.void', { key: `purchase:${p2}:void`, purchaseId: p2 });
    const reverse = await check('open_purchases_have_pending_holds');
    expect(reverse).toMatchObject({ ok: false, details: { purchases: [{ purchaseId: p2, problem: 'hold is voided' }] } });

    // The buyer's refund closes p2 in escrow (the ledger's void is already done: its key makes it a no-op).
    await app.api.ok('request_refund', { purchaseId: p2 }, s.buyer.apiKey);
    await app.api.ok('request_refund', { purchaseId: p1 }, s.buyer.apiKey);
    await expectLedgerClean(app);
  });
});
