/** The ledger through broker.call on PGlite: double entry, holds, fees, idempotency, consumers, cash-out, audit. */
import { startLedger, uid, type LedgerHarness } from './helpers';
import { creditGas, expectLedgerClean } from '../../../test/kit/ledger';

const event = (topic: string, data: Record<string, unknown>) => ({ eventId: uid('evt'), topic, occurredAt: new Date().toISOString(), data });

describe('ledger', () => {
  let h: LedgerHarness;
  beforeAll(async () => {
    h = await startLedger();
  });
  afterAll(async () => {
    await h?.stop();
  });
  afterEach(async () => {
    await expectLedgerClean(h);
  });

  const balance = async (agentId: string) => (await h.call('ledger.balance', { agentId })).gasBalance;

  it('credits a gas purchase once per key', async () => {
    const agentId = uid('agt');
    expect(await balance(agentId)).toBe(0);
    const args = { key: 'checkout:cko_once', agentId, gas: 500, sessionId: 'cko_once', packId: 'starter' };
    const first = await h.call('ledger.creditGasPurchase', args);
    expect(first).toMatchObject({ gasBalance: 500, replayed: false, transactionId: expect.stringMatching(/^txn_/) });
    const again = await h.call('ledger.creditGasPurchase', args);
    expect(again).toEqual({ transactionId: first.transactionId, gasBalance: 500, replayed: true });
    expect(await balance(agentId)).toBe(500);
    // The same key for a different fact is refused, not silently replayed.
    await expect(h.call('ledger.creditGasPurchase', { ...args, gas: 2000 })).rejects.toMatchObject({ type: 'invalid_arguments' });
  });

  it('holds, settles with the 10% fee rounded half up, and voids', async () => {
    const buyer = uid('agt');
    const seller = uid('agt');
    await creditGas(h, buyer, 1000);
    const p1 = uid('pur');
    const hold = await h.call('ledger.hold', { key: `purchase:${p1}:hold`, purchaseId: p1, buyerId: buyer, sellerId: seller, amountGas: 250 });
    expect(hold).toMatchObject({ holdId: expect.stringMatching(/^txn_/), status: 'pending', replayed: false });
    const replay = await h.call('ledger.hold', { key: `purchase:${p1}:hold`, purchaseId: p1, buyerId: buyer, sellerId: seller, amountGas: 250 });
    expect(replay).toMatchObject({ holdId: hold.holdId, status: 'pending', replayed: true });
    expect(await balance(buyer)).toBe(750);

    const buyerWallet = await h.call('ledger.walletFigures', { agentId: buyer });
    expect(buyerWallet).toMatchObject({ gasBalance: 750, heldGas: 250, pendingEarningsGas: 0 });
    const sellerWallet = await h.call('ledger.walletFigures', { agentId: seller });
    expect(sellerWallet).toMatchObject({ gasBalance: 0, heldGas: 0, pendingEarningsGas: 225, withdrawableGas: 0, lifetimeEarnedGas: 0, entries: [] });

    const s = await h.call('ledger.settle', { key: `purchase:${p1}:settle`, purchaseId: p1 });
    expect(s).toMatchObject({ status: 'posted', priceGas: 250, sellerNetGas: 225, platformFeeGas: 25, replayed: false });
    expect((await h.call('ledger.settle', { key: `purchase:${p1}:settle`, purchaseId: p1 })).replayed).toBe(true);
    await expect(h.call('ledger.void', { key: `purchase:${p1}:void`, purchaseId: p1 })).rejects.toMatchObject({ type: 'invalid_state' });
    expect(await balance(seller)).toBe(225);
    expect(await balance(buyer)).toBe(750);

    const p2 = uid('pur');
    await h.call('ledger.hold', { key: `purchase:${p2}:hold`, purchaseId: p2, buyerId: buyer, sellerId: seller, amountGas: 15 });
    const v = await h.call('ledger.void', { key: `purchase:${p2}:void`, purchaseId: p2 });
    expect(v).toMatchObject({ status: 'voided', amountGas: 15, gasBalance: 750, replayed: false });
    await expect(h.call('ledger.settle', { key: `purchase:${p2}:settle`, purchaseId: p2 })).rejects.toMatchObject({ type: 'invalid_state' });
    await expect(h.call('ledger.settle', { key: 'purchase:nope:settle', purchaseId: 'pur_nope' })).rejects.toMatchObject({ type: 'not_found' });

    const sellerAfter = await h.call('ledger.walletFigures', { agentId: seller });
    expect(sellerAfter).toMatchObject({ gasBalance: 225, pendingEarningsGas: 0, withdrawableGas: 225, lifetimeEarnedGas: 225 });
    expect(sellerAfter.entries).toEqual([
      { id: expect.any(String), type: 'sale_earn', amountGas: 225, balanceAfterGas: 225, purchaseId: p1, createdAt: expect.any(String) },
    ]);
    const buyerAfter = await h.call('ledger.walletFigures', { agentId: buyer });
    expect(buyerAfter.entries.map((e: any) => [e.type, e.amountGas, e.balanceAfterGas])).toEqual([
      ['escrow_refund', 15, 750],
      ['escrow_hold', -15, 735],
      ['escrow_hold', -250, 750],
      ['gas_purchase', 1000, 1000],
    ]);
    expect((await h.call('ledger.openHolds')).find((x: any) => x.purchaseId === p1 || x.purchaseId === p2)).toBeUndefined();
  });

  it('refuses a hold larger than the balance with insufficient_gas and moves nothing', async () => {
    const buyer = uid('agt');
    await creditGas(h, buyer, 100);
    const p = uid('pur');
    const err = await h.call('ledger.hold', { key: `purchase:${p}:hold`, purchaseId: p, buyerId: buyer, sellerId: uid('agt'), amountGas: 130 }).catch((e) => e);
    expect(err).toMatchObject({ type: 'insufficient_gas', code: 402, data: { details: { balanceGas: 100, requiredGas: 130, shortfallGas: 30 }, hint: expect.stringContaining('buy_gas') } });
    expect(await balance(buyer)).toBe(100);
    // The failed key is not remembered: after topping up, the same key succeeds.
    await creditGas(h, buyer, 500);
    expect((await h.call('ledger.hold', { key: `purchase:${p}:hold`, purchaseId: p, buyerId: buyer, sellerId: uid('agt'), amountGas: 130 })).replayed).toBe(false);
    await h.call('ledger.void', { key: `purchase:${p}:void`, purchaseId: p });
    await expect(h.call('ledger.hold', { key: 'x:hold', purchaseId: uid('pur'), buyerId: buyer, sellerId: uid('agt'), amountGas: 0 })).rejects.toMatchObject({ type: 'VALIDATION_ERROR' });
    await expect(h.call('ledger.hold', { key: 'x:hold', purchaseId: uid('pur'), buyerId: buyer, sellerId: uid('agt'), amountGas: 1.5 })).rejects.toMatchObject({ type: 'VALIDATION_ERROR' });
  });

  it('settles, voids and pays referral bonuses from escrow events exactly once', async () => {
    const buyer = uid('agt');
    const seller = uid('agt');
    const referrer = uid('agt');
    await creditGas(h, buyer, 300);
    const [pa, pb] = [uid('pur'), uid('pur')];
    await h.call('ledger.hold', { key: `purchase:${pa}:hold`, purchaseId: pa, buyerId: buyer, sellerId: seller, amountGas: 100 });
    await h.call('ledger.hold', { key: `purchase:${pb}:hold`, purchaseId: pb, buyerId: buyer, sellerId: seller, amountGas: 200 });
    const completed = event('escrow.purchase.completed', { purchaseId: pa, buyerId: buyer, sellerId: seller, priceGas: 100 });
    await (h.broker as any).sendToChannel('escrow.purchase.completed', completed);
    await (h.broker as any).sendToChannel('escrow.purchase.completed', completed);
    await (h.broker as any).sendToChannel('escrow.purchase.completed', { ...completed, eventId: uid('evt') });
    const refunded = event('escrow.purchase.refunded', { purchaseId: pb, buyerId: buyer, sellerId: seller, priceGas: 200 });
    await (h.broker as any).sendToChannel('escrow.purchase.refunded', refunded);
    await (h.broker as any).sendToChannel('escrow.purchase.refunded', refunded);
    // A late, contradictory event is acknowledged (logged), not retried forever, and moves nothing.
    await (h.broker as any).sendToChannel('escrow.purchase.completed', event('escrow.purchase.completed', { purchaseId: pb }));
    expect(await balance(seller)).toBe(90);
    expect(await balance(buyer)).toBe(200);

    const referral = event('escrow.referral.qualified', { referrerId: referrer, referredId: buyer, purchaseId: pa });
    await (h.broker as any).sendToChannel('escrow.referral.qualified', referral);
    await (h.broker as any).sendToChannel('escrow.referral.qualified', { ...referral, eventId: uid('evt') });
    expect(await balance(referrer)).toBe(50);
    const w = await h.call('ledger.walletFigures', { agentId: referrer });
    expect(w.entries.map((e: any) => e.type)).toEqual(['referral_bonus']);
    expect(w.withdrawableGas).toBe(0);
  });

  it('caps referral bonuses at 10 per referrer per rolling 7 days and refuses self-referral', async () => {
    const referrer = uid('agt');
    const outcomes = [];
    for (let i = 0; i < 11; i++) {
      const referredId = uid('agt');
      outcomes.push(await h.call('ledger.referralBonus', { key: `referral:${referredId}`, referrerId: referrer, referredId }));
    }
    expect(outcomes.filter((o) => o.credited)).toHaveLength(10);
    expect(outcomes[10]).toMatchObject({ credited: false, reason: 'weekly_cap' });
    expect(await balance(referrer)).toBe(500);
    h.clock.advanceDays(8);
    try {
      const late = uid('agt');
      expect((await h.call('ledger.referralBonus', { key: `referral:${late}`, referrerId: referrer, referredId: late })).credited).toBe(true);
    } finally {
      h.clock.advanceDays(-8);
    }
    expect(await h.call('ledger.referralBonus', { key: `referral:${referrer}`, referrerId: referrer, referredId: referrer })).toMatchObject({
      credited: false,
      reason: 'self_referral',
    });
  });

  it('cash-out primitives: withdrawable = min(balance, sale_earn − cashed out), paid with the 2% fee, or returned', async () => {
    const buyer = uid('agt');
    const seller = uid('agt');
    await creditGas(h, buyer, 1000);
    await creditGas(h, seller, 300); // bought gas is spendable but not withdrawable
    const p = uid('pur');
    await h.call('ledger.hold', { key: `purchase:${p}:hold`, purchaseId: p, buyerId: buyer, sellerId: seller, amountGas: 600 });
    await h.call('ledger.settle', { key: `purchase:${p}:settle`, purchaseId: p });
    expect(await h.call('ledger.withdrawable', { agentId: seller })).toMatchObject({ withdrawableGas: 540, lifetimeEarnedGas: 540, cashedOutGas: 0, gasBalance: 840 });

    const c1 = uid('csh');
    await expect(h.call('ledger.cashoutDebit', { key: `cashout:${c1}:debit`, cashoutId: c1, agentId: seller, amountGas: 541 })).rejects.toMatchObject({
      type: 'invalid_state',
      data: { details: { withdrawableGas: 540 } },
    });
    const d = await h.call('ledger.cashoutDebit', { key: `cashout:${c1}:debit`, cashoutId: c1, agentId: seller, amountGas: 540 });
    expect(d).toMatchObject({ gasBalance: 300, withdrawableGas: 0, replayed: false });
    expect((await h.call('ledger.cashoutDebit', { key: `cashout:${c1}:debit`, cashoutId: c1, agentId: seller, amountGas: 540 })).replayed).toBe(true);
    const paid = await h.call('ledger.cashoutPaid', { key: `cashout:${c1}:paid`, cashoutId: c1 });
    expect(paid).toMatchObject({ status: 'paid', amountGas: 540, feeGas: 11, netGas: 529, replayed: false });
    await expect(h.call('ledger.cashoutReturn', { key: `cashout:${c1}:return`, cashoutId: c1 })).rejects.toMatchObject({ type: 'invalid_state' });
    expect(await h.call('ledger.withdrawable', { agentId: seller })).toMatchObject({ withdrawableGas: 0, cashedOutGas: 540 });

    // Another sale, a cash-out that the operator rejects: the gas comes back and is withdrawable again.
    const p2 = uid('pur');
    await h.call('ledger.hold', { key: `purchase:${p2}:hold`, purchaseId: p2, buyerId: buyer, sellerId: seller, amountGas: 400 });
    await h.call('ledger.settle', { key: `purchase:${p2}:settle`, purchaseId: p2 });
    const c2 = uid('csh');
    await h.call('ledger.cashoutDebit', { key: `cashout:${c2}:debit`, cashoutId: c2, agentId: seller, amountGas: 360 });
    const ret = await h.call('ledger.cashoutReturn', { key: `cashout:${c2}:return`, cashoutId: c2 });
    expect(ret).toMatchObject({ status: 'returned', amountGas: 360, gasBalance: 660 });
    expect((await h.call('ledger.cashoutReturn', { key: `cashout:${c2}:return`, cashoutId: c2 })).replayed).toBe(true);
    expect(await h.call('ledger.withdrawable', { agentId: seller })).toMatchObject({ withdrawableGas: 360, lifetimeEarnedGas: 900, cashedOutGas: 540 });
    const w = await h.call('ledger.walletFigures', { agentId: seller });
    expect(w.entries.slice(0, 2).map((e: any) => [e.type, e.amountGas, e.cashoutId])).toEqual([
      ['cashout_returned', 360, c2],
      ['cashout', -360, c2],
    ]);
  });

  it('pending carries its amounts: settle posts the held split and cashoutPaid the fee stored at debit, never recomputed', async () => {
    const buyer = uid('agt');
    const seller = uid('agt');
    await creditGas(h, buyer, 1000);
    const p = uid('pur');
    // Quoted at 20 %: 500 → fee 100, seller 400.
    await h.call('ledger.hold', { key: `purchase:${p}:hold`, purchaseId: p, buyerId: buyer, sellerId: seller, amountGas: 500, platformFeeGas: 100, sellerNetGas: 400 });
    expect(await h.call('ledger.getHold', { purchaseId: p })).toMatchObject({ amountGas: 500, platformFeeGas: 100, sellerNetGas: 400, status: 'pending' });
    expect(await h.call('ledger.walletFigures', { agentId: seller })).toMatchObject({ pendingEarningsGas: 400 });
    expect(await h.call('ledger.settle', { key: `purchase:${p}:settle`, purchaseId: p })).toMatchObject({ priceGas: 500, platformFeeGas: 100, sellerNetGas: 400 });
    expect((await h.call('ledger.balance', { agentId: seller })).gasBalance).toBe(400);
    await expect(
      h.call('ledger.hold', { key: `purchase:${uid('pur')}:hold`, purchaseId: uid('pur'), buyerId: buyer, sellerId: seller, amountGas: 100, platformFeeGas: 30, sellerNetGas: 80 }),
    ).rejects.toMatchObject({ type: 'invalid_arguments' });

    // A cash-out quoted with a 5 % fee (400 → 20) is paid with exactly that fee.
    const c = uid('csh');
    await h.call('ledger.cashoutDebit', { key: `cashout:${c}:debit`, cashoutId: c, agentId: seller, amountGas: 400, feeGas: 20 });
    expect(await h.call('ledger.cashoutPaid', { key: `cashout:${c}:paid`, cashoutId: c })).toMatchObject({ amountGas: 400, feeGas: 20, netGas: 380 });
    await expectLedgerClean(h);
  });

  it('pages entries newest first with a cursor', async () => {
    const agentId = uid('agt');
    for (let i = 1; i <= 25; i++) await creditGas(h, agentId, i);
    const seen: number[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await h.call('ledger.walletFigures', { agentId, limit: 10, ...(cursor ? { cursor } : {}) });
      seen.push(...page.entries.map((e: any) => e.amountGas));
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => 25 - i));
    const bad = await h.call('ledger.walletFigures', { agentId, cursor: 'garbage' }).catch((e) => e);
    expect(bad).toMatchObject({ type: 'invalid_arguments', data: { hint: expect.any(String) } });
    await expect(h.call('ledger.walletFigures', {})).rejects.toMatchObject({ type: 'VALIDATION_ERROR' });
  });

  it('the database itself refuses unbalanced transactions, edits, deletes and negative agent balances', async () => {
    const agentId = uid('agt');
    await creditGas(h, agentId, 10);
    await expect(
      h.db.transaction(async (tx) => {
        await tx.query(`INSERT INTO ledger.transactions (id, key, type, fingerprint, created_at) VALUES ('txn_bad', 'bad', 'gas_purchase', '{}', now())`);
        await tx.query(`INSERT INTO ledger.postings (transaction_id, account_id, amount, entry_type, balance_after, created_at) VALUES ('txn_bad', 'platform:platform_fees', 5, 'platform_fee', 5, now())`);
      }),
    ).rejects.toThrow(/does not balance/);
    await expect(h.db.query(`UPDATE ledger.postings SET amount = amount * 2`)).rejects.toThrow(/append-only/);
    await expect(h.db.query(`DELETE FROM ledger.transactions`)).rejects.toThrow(/append-only/);
    await expect(h.db.query(`UPDATE ledger.accounts SET balance = -1 WHERE agent_id = $1`, [agentId])).rejects.toThrow(/agent_balance_not_negative/);
  });

  it('the audit reports a balance that differs from its postings', async () => {
    const agentId = uid('agt');
    await creditGas(h, agentId, 10);
    const p = uid('pur');
    await h.call('ledger.hold', { key: `purchase:${p}:hold`, purchaseId: p, buyerId: agentId, sellerId: uid('agt'), amountGas: 5 });
    await h.db.query(`UPDATE ledger.accounts SET balance = balance + 1 WHERE agent_id = $1`, [agentId]);
    try {
      const audit = await h.call('ledger.audit');
      expect(audit.ok).toBe(false);
      const check = audit.checks.find((c: any) => c.name === 'balances_equal_postings');
      expect(check).toMatchObject({ ok: false, details: { accounts: [expect.objectContaining({ id: `agent:${agentId}` })] } });
      // The cross-check with escrow's open purchases is escrow's (escrow.auditHolds): the ledger asks nobody.
      expect(audit.checks.find((c: any) => c.name === 'pending_holds_belong_to_open_purchases')).toBeUndefined();
    } finally {
      await h.db.query(`UPDATE ledger.accounts SET balance = balance - 1 WHERE agent_id = $1`, [agentId]);
      await h.call('ledger.void', { key: `purchase:${p}:void`, purchaseId: p });
    }
  });
});
