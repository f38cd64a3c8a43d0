/**
 * The audit's cross-checks with escrow: a small stand-in escrow service on the same broker answers
 * which purchases are open, so the ledger's side of the comparison is exercised for real.
 */
import type { ServiceSchema } from 'moleculer';
import { startLedger, uid, type LedgerHarness } from './helpers';
import { creditGas } from '../../../packages/testkit/ledger';

const escrowView = { open: new Map<string, number>() };

const EscrowStandIn: ServiceSchema = {
  name: 'escrow',
  actions: {
    openPurchaseIds: {
      params: { purchaseIds: { type: 'array', items: 'string' } },
      handler: (ctx: any) => (ctx.params.purchaseIds as string[]).filter((id) => escrowView.open.has(id)),
    },
    openPurchases: {
      handler: () => [...escrowView.open].map(([purchaseId, amountGas]) => ({ purchaseId, amountGas, status: 'awaiting_delivery' })),
    },
  },
};

describe('ledger audit against escrow', () => {
  let h: LedgerHarness;
  beforeAll(async () => {
    h = await startLedger(null, [EscrowStandIn]);
  });
  afterAll(async () => {
    await h?.stop();
  });

  const check = async (name: string) => (await h.call('ledger.audit')).checks.find((c: any) => c.name === name);

  it('passes when holds and open purchases agree, and flags either side going wrong', async () => {
    const buyer = uid('agt');
    const seller = uid('agt');
    await creditGas(h, buyer, 1000);
    const [p1, p2] = [uid('pur'), uid('pur')];
    for (const p of [p1, p2]) {
      await h.call('ledger.hold', { key: `purchase:${p}:hold`, purchaseId: p, buyerId: buyer, sellerId: seller, amountGas: 100 });
      escrowView.open.set(p, 100);
    }
    const clean = await h.call('ledger.audit');
    expect(clean.ok).toBe(true);
    expect(clean.checks.filter((c: any) => c.skipped)).toEqual([]);

    // Escrow closed p2 but the ledger never heard: the hold is an orphan (after the re-check pause).
    escrowView.open.delete(p2);
    expect(await check('pending_holds_belong_to_open_purchases')).toMatchObject({ ok: false, details: { purchaseIds: [p2] } });
    await h.call('ledger.void', { key: `purchase:${p2}:void`, purchaseId: p2 });

    // Escrow thinks p3 is funded but the ledger holds nothing for it; p1's price disagrees.
    const p3 = uid('pur');
    escrowView.open.set(p3, 50);
    escrowView.open.set(p1, 120);
    const reverse = await check('open_purchases_have_pending_holds');
    expect(reverse.ok).toBe(false);
    expect(reverse.details.purchases).toEqual(
      expect.arrayContaining([
        { purchaseId: p3, problem: 'no hold' },
        { purchaseId: p1, problem: expect.stringContaining('≠ price 120') },
      ]),
    );
    escrowView.open.delete(p3);
    escrowView.open.set(p1, 100);
    expect((await h.call('ledger.audit')).ok).toBe(true);
  });
});
