/**
 * Concurrency on real PostgreSQL (PGlite is single-connection and would hide races):
 * concurrent holds never overdraw, replayed idempotent calls move money once, settle and void
 * race for one hold and exactly one wins, caps hold under concurrency, and the audit passes.
 */
import { createTestDatabase, describeWithPostgres, startTestApp, type TestDatabase } from '../../../test/kit';
import { settled, startLedger, uid, type LedgerHarness } from './helpers';
import { creditGas, expectLedgerClean } from '../../../test/kit/ledger';
import { openSandboxCheckout, submitSandboxForm } from '../../../test/kit/checkout';
import { holdWriter, settlePendingHolds, settleWriter } from '../holds';
import { postLegs } from '../legs';
import { claimKey } from '../postings';

describeWithPostgres('ledger on PostgreSQL under concurrency', () => {
  let testDb: TestDatabase;
  let h: LedgerHarness;
  beforeAll(async () => {
    testDb = await createTestDatabase();
    h = await startLedger(testDb.url);
  });
  afterAll(async () => {
    await h?.stop();
    await testDb?.drop();
  });
  afterEach(async () => {
    await expectLedgerClean(h);
  });

  const balance = async (agentId: string) => (await h.call('ledger.balance', { agentId })).gasBalance;

  it('credits racing to open a new agent\'s account all land', async () => {
    for (let round = 0; round < 40; round++) {
      const agent = uid('agt');
      const results = settled(await Promise.allSettled(Array.from({ length: 12 }, () => creditGas(h, agent, 50))));
      expect(results.errors).toEqual([]);
      expect(await balance(agent)).toBe(600);
    }
  });

  it('many concurrent holds against one balance never overdraw', async () => {
    const buyer = uid('agt');
    await creditGas(h, buyer, 1000);
    const results = settled(
      await Promise.allSettled(
        Array.from({ length: 40 }, () => {
          const p = uid('pur');
          return h.call('ledger.hold', { key: `purchase:${p}:hold`, purchaseId: p, buyerId: buyer, sellerId: uid('agt'), amountGas: 100 });
        }),
      ),
    );
    expect(results.ok).toHaveLength(10);
    expect(results.errors).toHaveLength(30);
    for (const e of results.errors) expect(e).toMatchObject({ type: 'insufficient_gas' });
    expect(await balance(buyer)).toBe(0);
    const wallet = await h.call('ledger.walletFigures', { agentId: buyer });
    expect(wallet).toMatchObject({ gasBalance: 0, heldGas: 1000 });
  });

  it('racing purchases by many buyers settle with platform rows never updated: their balances are their postings', async () => {
    const buyers = Array.from({ length: 16 }, () => uid('agt'));
    const seller = uid('agt');
    for (const b of buyers) await creditGas(h, b, 1000);
    const rowsBefore = (await h.db.query<{ id: string; balance: string }>(`SELECT id, balance FROM ledger.accounts WHERE kind = 'platform' ORDER BY id`)).rows;
    const results = settled(
      await Promise.allSettled(
        buyers.flatMap((buyerId) =>
          Array.from({ length: 3 }, async () => {
            const p = uid('pur');
            await h.call('ledger.hold', { key: `purchase:${p}:hold`, purchaseId: p, buyerId, sellerId: seller, amountGas: 250 });
            // Replays of both steps answer the same and move nothing.
            await h.call('ledger.hold', { key: `purchase:${p}:hold`, purchaseId: p, buyerId, sellerId: seller, amountGas: 250 });
            const first = await h.call('ledger.settle', { key: `purchase:${p}:settle`, purchaseId: p });
            const again = await h.call('ledger.settle', { key: `purchase:${p}:settle`, purchaseId: p });
            expect(again).toMatchObject({ transactionId: first.transactionId, replayed: true });
            expect(first).toMatchObject({ priceGas: 250, sellerNetGas: 225, platformFeeGas: 25, replayed: false });
          }),
        ),
      ),
    );
    expect(results.errors).toEqual([]);
    expect(await balance(seller)).toBe(16 * 3 * 225);
    for (const b of buyers) expect(await balance(b)).toBe(1000 - 3 * 250);
    // The platform rows were not touched (pinned at 0); their derived balances equal their postings.
    const rowsAfter = (await h.db.query<{ id: string; balance: string }>(`SELECT id, balance FROM ledger.accounts WHERE kind = 'platform' ORDER BY id`)).rows;
    expect(rowsAfter).toEqual(rowsBefore);
    for (const r of rowsAfter) expect(Number(r.balance)).toBe(0);
    const derived = await h.db.query<{ id: string; balance: string; postings: string }>(
      `SELECT b.id, b.balance, (SELECT COALESCE(sum(amount), 0) FROM ledger.postings p WHERE p.account_id = b.id) AS postings
         FROM ledger.account_balances b WHERE b.kind = 'platform'`,
    );
    for (const r of derived.rows) expect(Number(r.balance)).toBe(Number(r.postings));
    await expect(h.db.query(`UPDATE ledger.accounts SET balance = balance + 1 WHERE id = 'platform:escrow_holds'`)).rejects.toThrow(/platform_balance_is_derived/);
  });

  it('an idempotent call replayed concurrently moves money once', async () => {
    const buyer = uid('agt');
    const seller = uid('agt');
    const sessionId = uid('cko');
    const credit = { key: `checkout:${sessionId}`, agentId: buyer, gas: 500, sessionId, packId: 'starter' };
    const credits = await Promise.all(Array.from({ length: 20 }, () => h.call('ledger.creditGasPurchase', credit)));
    expect(credits.filter((c) => !c.replayed)).toHaveLength(1);
    expect(new Set(credits.map((c) => c.transactionId)).size).toBe(1);
    expect(await balance(buyer)).toBe(500);

    const p = uid('pur');
    const hold = { key: `purchase:${p}:hold`, purchaseId: p, buyerId: buyer, sellerId: seller, amountGas: 300 };
    const holds = await Promise.all(Array.from({ length: 20 }, () => h.call('ledger.hold', hold)));
    expect(holds.filter((x) => !x.replayed)).toHaveLength(1);
    expect(await balance(buyer)).toBe(200);

    const settles = await Promise.all(Array.from({ length: 20 }, () => h.call('ledger.settle', { key: `purchase:${p}:settle`, purchaseId: p })));
    expect(settles.filter((x) => !x.replayed)).toHaveLength(1);
    expect(await balance(seller)).toBe(270);

    const referred = uid('agt');
    const bonuses = await Promise.all(
      Array.from({ length: 10 }, () => h.call('ledger.referralBonus', { key: `referral:${referred}`, referrerId: seller, referredId: referred })),
    );
    expect(bonuses.filter((b) => b.credited && !b.replayed)).toHaveLength(1);
    expect(await balance(seller)).toBe(320);

    const c = uid('csh');
    const debits = await Promise.all(
      Array.from({ length: 10 }, () => h.call('ledger.cashoutDebit', { key: `cashout:${c}:debit`, cashoutId: c, agentId: seller, amountGas: 270 })),
    );
    expect(debits.filter((d) => !d.replayed)).toHaveLength(1);
    expect(await balance(seller)).toBe(50);
    const finals = settled(
      await Promise.allSettled([
        ...Array.from({ length: 5 }, () => h.call('ledger.cashoutPaid', { key: `cashout:${c}:paid`, cashoutId: c })),
        ...Array.from({ length: 5 }, () => h.call('ledger.cashoutReturn', { key: `cashout:${c}:return`, cashoutId: c })),
      ]),
    );
    // Exactly one outcome wins; its replays succeed, the other outcome is invalid_state.
    const winners = new Set(finals.ok.map((f: any) => f.status));
    expect(winners.size).toBe(1);
    expect(finals.ok.filter((f: any) => !f.replayed)).toHaveLength(1);
    for (const e of finals.errors) expect(e).toMatchObject({ type: 'invalid_state' });
  });

  it('holds for one purchase under different keys, concurrently: one hold, one debit', async () => {
    const buyer = uid('agt');
    await creditGas(h, buyer, 1000);
    const p = uid('pur');
    const r = settled(
      await Promise.allSettled(
        Array.from({ length: 8 }, (_, i) => h.call('ledger.hold', { key: `other:${p}:${i}`, purchaseId: p, buyerId: buyer, sellerId: uid('agt'), amountGas: 100 })),
      ),
    );
    expect(r.ok).toHaveLength(1);
    for (const e of r.errors) expect(e).toMatchObject({ type: 'invalid_state' });
    expect(await balance(buyer)).toBe(900);
  });

  it('settle and void racing for the same hold: exactly one wins', async () => {
    const buyer = uid('agt');
    const seller = uid('agt');
    await creditGas(h, buyer, 10 * 100);
    for (let i = 0; i < 10; i++) {
      const p = uid('pur');
      await h.call('ledger.hold', { key: `purchase:${p}:hold`, purchaseId: p, buyerId: buyer, sellerId: seller, amountGas: 100 });
      const r = settled(
        await Promise.allSettled([
          h.call('ledger.settle', { key: `purchase:${p}:settle`, purchaseId: p }),
          h.call('ledger.void', { key: `purchase:${p}:void`, purchaseId: p }),
          h.call('ledger.settle', { key: `purchase:${p}:settle`, purchaseId: p }),
          h.call('ledger.void', { key: `purchase:${p}:void`, purchaseId: p }),
        ]),
      );
      expect(new Set(r.ok.map((x: any) => x.status)).size).toBe(1);
      expect(r.ok.filter((x: any) => !x.replayed)).toHaveLength(1);
      for (const e of r.errors) expect(e).toMatchObject({ type: 'invalid_state' });
    }
    const sellerGas = await balance(seller);
    const buyerGas = await balance(buyer);
    const settledCount = sellerGas / 90;
    expect(Number.isInteger(settledCount)).toBe(true);
    expect(buyerGas).toBe((10 - settledCount) * 100);
  });

  it('the referral weekly cap and the withdrawable limit hold under concurrency', async () => {
    const referrer = uid('agt');
    const bonuses = await Promise.all(
      Array.from({ length: 16 }, () => {
        const referredId = uid('agt');
        return h.call('ledger.referralBonus', { key: `referral:${referredId}`, referrerId: referrer, referredId });
      }),
    );
    expect(bonuses.filter((b) => b.credited)).toHaveLength(10);
    expect(await balance(referrer)).toBe(500);

    const buyer = uid('agt');
    const seller = uid('agt');
    await creditGas(h, buyer, 500);
    const p = uid('pur');
    await h.call('ledger.hold', { key: `purchase:${p}:hold`, purchaseId: p, buyerId: buyer, sellerId: seller, amountGas: 500 });
    await h.call('ledger.settle', { key: `purchase:${p}:settle`, purchaseId: p });
    // 450 withdrawable; ten concurrent cash-outs of 100: four fit.
    const r = settled(
      await Promise.allSettled(
        Array.from({ length: 10 }, () => {
          const c = uid('csh');
          return h.call('ledger.cashoutDebit', { key: `cashout:${c}:debit`, cashoutId: c, agentId: seller, amountGas: 100 });
        }),
      ),
    );
    expect(r.ok).toHaveLength(4);
    for (const e of r.errors) expect(e).toMatchObject({ type: 'invalid_state' });
    expect(await balance(seller)).toBe(50);
  });

  it('settles of many purchases in one statement: each exactly as alone; a seller twice moves nothing; a hold settled before is answered alone', async () => {
    const holdFor = async (buyer: string, seller: string, amountGas: number) => {
      const p = uid('pur');
      await h.call('ledger.hold', { key: `purchase:${p}:hold`, purchaseId: p, buyerId: buyer, sellerId: seller, amountGas });
      return p;
    };
    const buyer = uid('agt');
    await creditGas(h, buyer, 5000);
    const sellers = Array.from({ length: 6 }, () => uid('agt'));
    const purchases = await Promise.all(sellers.map((s, i) => holdFor(buyer, s, 100 + i * 50)));
    // A seller twice in one statement: it fails whole, nothing moved.
    const twice = await holdFor(buyer, sellers[0], 100);
    await expect(settlePendingHolds(h.db, new Date(), [purchases[0], twice].map((p) => ({ key: `purchase:${p}:settle`, purchaseId: p })))).rejects.toThrow();
    expect(await balance(sellers[0])).toBe(0);
    // One already settled alone: the statement settles the others and answers null for it (settleHold answers it).
    await h.call('ledger.settle', { key: `purchase:${purchases[5]}:settle`, purchaseId: purchases[5] });
    const sellerFiveBefore = await balance(sellers[5]);
    const results = await settlePendingHolds(h.db, new Date(), purchases.map((p) => ({ key: `purchase:${p}:settle`, purchaseId: p })));
    expect(results.map((r) => r?.status ?? null)).toEqual(['posted', 'posted', 'posted', 'posted', 'posted', null]);
    for (const [i, s] of sellers.slice(0, 5).entries()) {
      const price = 100 + i * 50;
      const fee = Math.round(price * 0.1);
      expect(results[i]).toMatchObject({ purchaseId: purchases[i], sellerId: s, priceGas: price, platformFeeGas: fee, sellerNetGas: price - fee, replayed: false });
      expect(await balance(s)).toBe(price - fee);
    }
    expect(await balance(sellers[5])).toBe(sellerFiveBefore);
    const again = await settlePendingHolds(h.db, new Date(), [{ key: `purchase:${twice}:settle-x`, purchaseId: purchases[0] }, { key: `purchase:${twice}:settle`, purchaseId: twice }]);
    expect(again[0]).toBeNull();
    expect(again[1]).toMatchObject({ status: 'posted', sellerId: sellers[0] });
    // The consumer's writer: settles arriving together share statements, each answered as settleHold would.
    const moreSellers = Array.from({ length: 12 }, () => uid('agt'));
    const more = await Promise.all(moreSellers.map((s) => holdFor(buyer, s, 100)));
    const writer = settleWriter(h.db, () => new Date());
    const answers = await Promise.all(
      [...more, more[0]].map((p, i) => writer.submit({ key: `purchase:${p}:settle`, purchaseId: p, sellerId: moreSellers[i % 12] })),
    );
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 'posted'));
    expect(answers[12]).toMatchObject({ purchaseId: more[0], replayed: true, transactionId: answers[0].transactionId });
    expect(writer.stats.batches).toBeLessThan(writer.stats.items);
    expect(writer.stats.retriedAlone).toBe(0);
  });

  it('holds with an evaluator settle and void in one statement, alone and batched, to the gas; first fees racing open the account once', async () => {
    const buyer = uid('agt');
    await creditGas(h, buyer, 100_000);
    const evaluator = uid('agt'); // no account yet: its first fees race to open it
    const hold = async (sellerId: string, evaluatorId = evaluator) => {
      const p = uid('pur');
      await h.call('ledger.hold', { key: `purchase:${p}:hold`, purchaseId: p, buyerId: buyer, sellerId, amountGas: 290, evaluatorId, evaluatorFeeGas: 40 });
      return p;
    };
    const postingsOf = async (p: string) =>
      Object.fromEntries(
        (await h.db.query<{ account_id: string; entry_type: string; amount: string }>(
          `SELECT p.account_id, p.entry_type, p.amount FROM ledger.postings p JOIN ledger.holds x ON x.final_transaction_id = p.transaction_id WHERE x.purchase_id = $1`,
          [p],
        )).rows.map((r) => [`${r.account_id.startsWith('agent:') ? 'agent' : r.account_id}:${r.entry_type}`, Number(r.amount)]),
      );
    // Alone, concurrently: each settle is its own statement (the evaluator's first account opened once).
    const sellers = Array.from({ length: 8 }, () => uid('agt'));
    const alone = await Promise.all(sellers.map((s) => hold(s)));
    const results = await Promise.all(alone.map((p, i) => h.call('ledger.settle', { key: `purchase:${p}:settle`, purchaseId: p, evaluatorPaid: i % 2 === 0 })));
    for (const r of results) expect(r).toMatchObject({ status: 'posted', priceGas: 250, sellerNetGas: 225, platformFeeGas: 25, replayed: false });
    expect(await postingsOf(alone[0])).toEqual({ 'platform:escrow_holds:escrow_release': -290, 'agent:sale_earn': 225, 'platform:platform_fees:platform_fee': 25, 'agent:evaluator_fee': 40 });
    expect(await postingsOf(alone[1])).toEqual({ 'platform:escrow_holds:escrow_release': -290, 'agent:sale_earn': 225, 'platform:platform_fees:platform_fee': 25, 'agent:escrow_refund': 40 });
    expect(await balance(evaluator)).toBe(4 * 40);
    for (const s of sellers) expect(await balance(s)).toBe(225);
    // Voids: the buyer's balance in the answer is after the refund (price, and the fee unless the evaluator is paid).
    const [v1, v2] = [await hold(uid('agt')), await hold(uid('agt'))];
    const before = await balance(buyer);
    const paid = await h.call('ledger.void', { key: `purchase:${v1}:void`, purchaseId: v1, evaluatorPaid: true });
    expect(paid).toMatchObject({ status: 'voided', amountGas: 290, gasBalance: before + 250, replayed: false });
    const unpaid = await h.call('ledger.void', { key: `purchase:${v2}:void`, purchaseId: v2, evaluatorPaid: false });
    expect(unpaid).toMatchObject({ status: 'voided', amountGas: 290, gasBalance: before + 250 + 290, replayed: false });
    expect(await balance(evaluator)).toBe(5 * 40);
    // Batched: distinct sellers and evaluators, paid and unpaid mixed, in one statement (one unpaid: the buyer is
    // credited once per statement, like any agent).
    const pairs = Array.from({ length: 6 }, () => ({ seller: uid('agt'), evaluator: uid('agt') }));
    const batch = await Promise.all(pairs.map((x) => hold(x.seller, x.evaluator)));
    const buyerBefore = await balance(buyer);
    const settled6 = await settlePendingHolds(h.db, new Date(), batch.map((p, i) => ({ key: `purchase:${p}:settle`, purchaseId: p, evaluatorPaid: i < 5 })));
    expect(settled6.map((r) => r?.priceGas)).toEqual(batch.map(() => 250));
    for (const [i, x] of pairs.entries()) {
      expect(await balance(x.seller)).toBe(225);
      expect(await balance(x.evaluator)).toBe(i < 5 ? 40 : 0);
    }
    expect(await balance(buyer)).toBe(buyerBefore + 40);
    // One agent credited twice in a batch (a seller who is also the buyer credited a fee back): the statement fails whole, nothing moved.
    const lastSeller = uid('agt');
    const buyerAsSeller = await hold(lastSeller);
    const other = uid('agt');
    await creditGas(h, other, 1000);
    const p = uid('pur');
    await h.call('ledger.hold', { key: `purchase:${p}:hold`, purchaseId: p, buyerId: other, sellerId: buyer, amountGas: 100 });
    const twice = [{ key: `purchase:${buyerAsSeller}:settle`, purchaseId: buyerAsSeller, evaluatorPaid: false }, { key: `purchase:${p}:settle`, purchaseId: p }];
    const buyerBeforeTwice = await balance(buyer);
    await expect(settlePendingHolds(h.db, new Date(), twice)).rejects.toThrow();
    expect(await balance(buyer)).toBe(buyerBeforeTwice);
    // The consumer's writer names the agents each settle credits (from the event), so it never batches these two.
    const writer = settleWriter(h.db, () => new Date());
    const answers = await Promise.all([
      writer.submit({ ...twice[0], sellerId: lastSeller, buyerId: buyer, evaluatorId: evaluator }),
      writer.submit({ ...twice[1], sellerId: buyer, buyerId: other }),
    ]);
    expect(answers.map((a) => a.status)).toEqual(['posted', 'posted']);
    expect(writer.stats.retriedAlone).toBe(0);
    expect(await balance(buyer)).toBe(buyerBeforeTwice + 40 + 90);
  });

  it('the stepwise posting opens a first credited account and refuses a debit the balance does not cover, moving nothing', async () => {
    const agent = uid('agt');
    const session = uid('cko');
    const at = new Date();
    const balances = await h.db.transaction(async (tx) => {
      const claim = await claimKey(tx, { key: `checkout:${session}`, type: 'gas_purchase', fingerprint: '{}', sessionId: session, at });
      if (claim.replayed) throw new Error('fresh key replayed');
      return postLegs(tx, 'gas_purchase', claim.id, { agent_id: agent, gas: 70 }, { sessionId: session }, at);
    });
    expect(balances.get(agent)).toBe(70);
    expect(await balance(agent)).toBe(70);
    const c = uid('csh');
    await expect(
      h.db.transaction(async (tx) => {
        const claim = await claimKey(tx, { key: `cashout:${c}:debit`, type: 'cashout', fingerprint: '{}', cashoutId: c, at });
        if (claim.replayed) throw new Error('fresh key replayed');
        return postLegs(tx, 'cashout', claim.id, { agent_id: agent, amount_gas: 71 }, { cashoutId: c }, at);
      }),
    ).rejects.toMatchObject({ type: 'insufficient_gas', data: { details: { balanceGas: 70, requiredGas: 71 } } });
    expect(await balance(agent)).toBe(70);
    expect((await h.db.query('SELECT 1 FROM ledger.transactions WHERE key = $1', [`cashout:${c}:debit`])).rowCount).toBe(0);
  });

  it('holds of many buyers in one statement: each exactly as alone; a short balance and a replay are answered alone', async () => {
    const buyers = Array.from({ length: 10 }, () => uid('agt'));
    for (const [i, b] of buyers.entries()) await creditGas(h, b, i === 3 ? 50 : 1000);
    const writer = holdWriter(h.db, () => new Date(), () => 10);
    const params = buyers.map((b) => {
      const p = uid('pur');
      return { key: `purchase:${p}:hold`, purchaseId: p, buyerId: b, sellerId: uid('agt'), amountGas: 200, platformFeeGas: 20, sellerNetGas: 180 };
    });
    const answers = await Promise.allSettled(params.map((p) => writer.submit(p)));
    expect(writer.stats.batches).toBeLessThan(writer.stats.items);
    expect(writer.stats.retriedAlone).toBe(0);
    answers.push(...(await Promise.allSettled([writer.submit(params[0])])));
    expect(answers.map((a) => a.status)).toEqual(answers.map((_, i) => (i === 3 ? 'rejected' : 'fulfilled')));
    expect((answers[3] as PromiseRejectedResult).reason).toMatchObject({ type: 'insufficient_gas' });
    const first = (answers[0] as PromiseFulfilledResult<any>).value;
    expect((answers[10] as PromiseFulfilledResult<any>).value).toMatchObject({ holdId: first.holdId, replayed: true });
    for (const [i, b] of buyers.entries()) {
      expect(await balance(b)).toBe(i === 3 ? 50 : 800);
      const hold = await h.call('ledger.getHold', { purchaseId: params[i].purchaseId });
      if (i === 3) expect(hold).toBeNull();
      else expect(hold).toMatchObject({ status: 'pending', amountGas: 200 });
    }
  });
});

describeWithPostgres('buying gas on PostgreSQL', () => {
  it('concurrent sandbox approvals of one session credit once; the audit passes', async () => {
    const app = await startTestApp({ postgres: true });
    try {
      const { apiKey } = await app.api.register('PG Buyer');
      const buy = await app.api.ok('buy_gas', { packId: 'starter' }, apiKey);
      const form = await openSandboxCheckout(`${app.baseUrl}${new URL(buy.checkoutUrl).pathname}`);
      const statuses = await Promise.all(Array.from({ length: 12 }, () => submitSandboxForm(form, 'approve').then((r) => r.status)));
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect((await app.api.ok('wallet', {}, apiKey)).gasBalance).toBe(500);
      await expectLedgerClean(app);
    } finally {
      await app.stop();
    }
  });

});
