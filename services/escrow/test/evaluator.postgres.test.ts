/**
 * Issue #35, evaluator-gated escrow, on real PostgreSQL: the buyer names a third agent whose verdict
 * releases or refunds. Price + fee are held together; accept pays the seller 90 % of the price, the
 * platform 10 % and the evaluator its fee; reject refunds the price and pays the evaluator; no verdict
 * in time → delivered (the fee goes back to the buyer when the purchase settles). Exactly one of a
 * verdict, a dispute, the timeout sweep and a refund wins under concurrency. Every test ends with the
 * ledger audit (and the reconciling audit).
 */
import { describeWithPostgres, eventually, startTestApp, type TestApp } from '../../../test/kit';
import { auditOf, expectLedgerClean } from '../../../test/kit/ledger';
import { newAgent, scenario, wallet, type Scenario, type TestAgent } from './helpers';

const PRICE = 250;
const FEE = 40;

describeWithPostgres('evaluator-gated escrow (issue #35) on PostgreSQL', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ postgres: true });
  });
  afterAll(async () => {
    await app?.stop();
  });
  afterEach(async () => {
    await expectLedgerClean(app);
    // The reconciling audit too: holds (price + fee) against escrow's purchases. Gas here is credited
    // straight to the ledger (no card checkout), so only the checkout pairing is left out.
    const report = await auditOf(app, { reconcile: true });
    expect(report.checks.filter((c) => (!c.ok || c.skipped) && c.name !== 'gas_credits_match_paid_checkouts')).toEqual([]);
  });

  async function setup(opts: { fundedGas?: number } = {}): Promise<Scenario & { evaluator: TestAgent }> {
    const s = await scenario(app, { fundedGas: opts.fundedGas ?? 1000 });
    const evaluator = await newAgent(app, 'Evaluator');
    return { ...s, evaluator };
  }

  async function buy(s: Scenario & { evaluator: TestAgent }, extra: Record<string, unknown> = {}) {
    return (await app.api.ok('purchase_service', { listingId: s.listingId, evaluator: { agentId: s.evaluator.id, feeGas: FEE }, ...extra }, s.buyer.apiKey)).purchase;
  }

  async function deliver(s: Scenario, purchaseId: string) {
    return (await app.api.ok('deliver_work', { purchaseId, delivery: { summary: 'ten Jest tests, all green' } }, s.seller.apiKey)).purchase;
  }

  /** The wallet once the ledger has consumed the settle/void (it is an outbox event). */
  async function settled(agent: TestAgent, gasBalance: number) {
    return eventually(async () => {
      const w = await wallet(app, agent);
      return w.gasBalance === gasBalance ? w : null;
    });
  }

  test('accept → completed: seller +90 % of the price, platform 10 %, evaluator +fee (evaluator_fee, withdrawable), buyer −price−fee', async () => {
    const s = await setup();
    const p = await buy(s);
    expect(p).toMatchObject({ status: 'awaiting_delivery', priceGas: PRICE, totalHeldGas: PRICE + FEE, evaluator: { agentId: s.evaluator.id, feeGas: FEE, evaluationHours: 48 } });
    expect(await wallet(app, s.buyer)).toMatchObject({ gasBalance: 1000 - PRICE - FEE, heldGas: PRICE + FEE });

    const delivered = await deliver(s, p.id);
    expect(delivered.status).toBe('awaiting_evaluation');
    expect(Date.parse(delivered.evaluator.evaluateBy) - Date.parse(delivered.deliveredAt)).toBe(48 * 3_600_000);
    // The evaluator sees it and reads the delivery; the buyer may not give the verdict.
    const listed = (await app.api.ok('list_orders', { role: 'evaluator' }, s.evaluator.apiKey)).purchases;
    expect(listed.map((x: { id: string }) => x.id)).toEqual([p.id]);
    expect(listed[0].role).toBe('evaluator');
    expect((await app.api.ok('get_delivery', { purchaseId: p.id }, s.evaluator.apiKey)).delivery.summary).toBe('ten Jest tests, all green');
    await app.api.ok('send_message', { purchaseId: p.id, body: 'Running the tests now.' }, s.evaluator.apiKey);
    const wrongCaller = await app.api.call('evaluate_delivery', { purchaseId: p.id, verdict: 'accept', report: 'fine' }, s.buyer.apiKey);
    expect(wrongCaller.status).toBe(403);
    expect(wrongCaller.body.error!).toMatchObject({ code: 'forbidden' });
    expect(wrongCaller.body.error!.hint).toMatch(/evaluator/);
    // The buyer cannot confirm past the evaluator.
    const early = await app.api.call('confirm_delivery', { purchaseId: p.id }, s.buyer.apiKey);
    expect(early.status).toBe(409);
    expect(early.body.error!.hint).toMatch(/evaluate_delivery/);

    const done = (await app.api.ok('evaluate_delivery', { purchaseId: p.id, verdict: 'accept', report: 'All 12 tests pass; coverage 94 %.' }, s.evaluator.apiKey)).purchase;
    expect(done).toMatchObject({ status: 'completed', evaluator: { verdict: 'accept', report: 'All 12 tests pass; coverage 94 %.' } });
    // The report is shown to both parties.
    for (const who of [s.buyer, s.seller]) {
      expect((await app.api.ok('get_purchase', { purchaseId: p.id }, who.apiKey)).purchase.evaluator.report).toBe('All 12 tests pass; coverage 94 %.');
    }
    await settled(s.seller, 225);
    expect(await wallet(app, s.buyer)).toMatchObject({ gasBalance: 1000 - PRICE - FEE, heldGas: 0 });
    expect(await wallet(app, s.seller)).toMatchObject({ gasBalance: 225, lifetimeEarnedGas: 225 });
    const ev = await settled(s.evaluator, FEE);
    expect(ev).toMatchObject({ gasBalance: FEE, lifetimeEarnedGas: FEE, withdrawableGas: FEE });
    const entries = (await app.api.ok('wallet', {}, s.evaluator.apiKey)).entries;
    expect(entries.map((e: { type: string }) => e.type)).toEqual(['evaluator_fee']);
    const sellerEntries = (await app.api.ok('wallet', {}, s.seller.apiKey)).entries;
    expect(sellerEntries.map((e: { type: string }) => e.type)).toEqual(['sale_earn']);
  });

  test('reject → refunded: the buyer gets the price back, the evaluator its fee', async () => {
    const s = await setup();
    const p = await buy(s);
    await deliver(s, p.id);
    const r = (await app.api.ok('evaluate_delivery', { purchaseId: p.id, verdict: 'reject', report: '3 of 12 tests fail.' }, s.evaluator.apiKey)).purchase;
    expect(r).toMatchObject({ status: 'refunded', evaluator: { verdict: 'reject', report: '3 of 12 tests fail.' } });
    await settled(s.buyer, 1000 - FEE);
    expect(await wallet(app, s.buyer)).toMatchObject({ gasBalance: 1000 - FEE, heldGas: 0 });
    expect(await settled(s.evaluator, FEE)).toMatchObject({ withdrawableGas: FEE });
    expect(await wallet(app, s.seller)).toMatchObject({ gasBalance: 0 });
    // A second verdict changes nothing.
    const again = await app.api.call('evaluate_delivery', { purchaseId: p.id, verdict: 'accept', report: 'changed my mind' }, s.evaluator.apiKey);
    expect(again.status).toBe(409);
    expect(again.body.error!.code).toBe('invalid_state');
  });

  test('silent evaluator: evaluationHours pass → delivered, auto-release starts; the buyer confirms and the fee comes back', async () => {
    const s = await setup();
    const p = await buy(s, { evaluationHours: 2 });
    expect(p.evaluator.evaluationHours).toBe(2);
    await deliver(s, p.id);
    app.clock.advance(2 * 3_600_000 - 60_000);
    await app.call('escrow.sweep');
    expect((await app.api.ok('get_purchase', { purchaseId: p.id }, s.buyer.apiKey)).purchase.status).toBe('awaiting_evaluation');
    app.clock.advance(120_000);
    await app.call('escrow.sweep');
    const timedOut = (await app.api.ok('get_purchase', { purchaseId: p.id }, s.buyer.apiKey)).purchase;
    expect(timedOut.status).toBe('delivered');
    expect(timedOut.evaluator.expiredAt).toBeTruthy();
    expect(timedOut.evaluator.evaluateBy).toBeNull();
    expect(Date.parse(timedOut.autoReleaseAt) - Date.parse(timedOut.evaluator.expiredAt)).toBe(3 * 86_400_000);
    const late = await app.api.call('evaluate_delivery', { purchaseId: p.id, verdict: 'accept', report: 'late' }, s.evaluator.apiKey);
    expect(late.status).toBe(409);
    await app.api.ok('confirm_delivery', { purchaseId: p.id }, s.buyer.apiKey);
    await settled(s.seller, 225);
    expect(await settled(s.buyer, 1000 - PRICE)).toMatchObject({ heldGas: 0 });
    expect(await wallet(app, s.evaluator)).toMatchObject({ gasBalance: 0 });
  });

  test('dispute while awaiting evaluation freezes escrow; the operator\'s refund gives price and fee back', async () => {
    const s = await setup();
    const p = await buy(s);
    await deliver(s, p.id);
    const d = (await app.api.ok('dispute_purchase', { purchaseId: p.id, reason: 'The evaluator is not answering and the tests look wrong.' }, s.buyer.apiKey)).purchase;
    expect(d.status).toBe('disputed');
    const frozen = await app.api.call('evaluate_delivery', { purchaseId: p.id, verdict: 'accept', report: 'ok' }, s.evaluator.apiKey);
    expect(frozen.status).toBe(409);
    await app.call('escrow.resolveDispute', { purchaseId: p.id, outcome: 'refund', note: 'no verdict' }, { operator: 'test-op' });
    expect(await settled(s.buyer, 1000)).toMatchObject({ heldGas: 0 });
    expect(await wallet(app, s.evaluator)).toMatchObject({ gasBalance: 0 });
  });

  test('dispute while awaiting evaluation; the operator releases: seller paid, the fee back to the buyer', async () => {
    const s = await setup();
    const p = await buy(s);
    await deliver(s, p.id);
    await app.api.ok('dispute_purchase', { purchaseId: p.id, reason: 'The buyer named an evaluator who is gone.' }, s.seller.apiKey);
    await app.call('escrow.resolveDispute', { purchaseId: p.id, outcome: 'release' }, { operator: 'test-op' });
    await settled(s.seller, 225);
    expect(await settled(s.buyer, 1000 - PRICE)).toMatchObject({ heldGas: 0 });
  });

  test('validation: evaluator = buyer or seller, unknown agent, fee below the minimum, report missing, wrong state, limits count the fee', async () => {
    const s = await setup();
    const cases: Array<[Record<string, unknown>, number, string, RegExp]> = [
      [{ agentId: s.buyer.id, feeGas: FEE }, 400, 'invalid_arguments', /third agent/],
      [{ agentId: s.seller.id, feeGas: FEE }, 400, 'invalid_arguments', /third agent/],
      [{ agentId: 'agt_doesnotexist', feeGas: FEE }, 400, 'invalid_arguments', /register/],
      [{ agentId: s.evaluator.id, feeGas: 5 }, 400, 'invalid_arguments', /.+/],
    ];
    for (const [evaluator, status, code, hint] of cases) {
      const r = await app.api.call('purchase_service', { listingId: s.listingId, evaluator }, s.buyer.apiKey);
      expect({ status: r.status, code: r.body.error?.code }).toEqual({ status, code });
      expect(r.body.error!.hint).toMatch(hint);
    }
    // The price guard counts the fee.
    const guard = await app.api.call('purchase_service', { listingId: s.listingId, maxPriceGas: PRICE, evaluator: { agentId: s.evaluator.id, feeGas: FEE } }, s.buyer.apiKey);
    expect(guard.status).toBe(409);
    expect(guard.body.error!.details).toMatchObject({ priceGas: PRICE, evaluatorFeeGas: FEE, totalGas: PRICE + FEE });
    expect(await wallet(app, s.buyer)).toMatchObject({ gasBalance: 1000, heldGas: 0 });

    const p = await buy(s);
    // Wrong state: no delivery yet.
    const early = await app.api.call('evaluate_delivery', { purchaseId: p.id, verdict: 'accept', report: 'ok' }, s.evaluator.apiKey);
    expect(early.status).toBe(409);
    expect(early.body.error!.code).toBe('invalid_state');
    expect(early.body.error!.hint).toBeTruthy();
    await deliver(s, p.id);
    // Report missing or blank.
    for (const args of [{ purchaseId: p.id, verdict: 'accept' }, { purchaseId: p.id, verdict: 'accept', report: '   ' }]) {
      const r = await app.api.call('evaluate_delivery', args, s.evaluator.apiKey);
      expect(r.status).toBe(400);
      expect(r.body.error!.code).toBe('invalid_arguments');
      expect(JSON.stringify(r.body.error!)).toMatch(/report/);
      expect(r.body.error!.hint).toBeTruthy();
    }
    // A stranger does not see it.
    const stranger = await newAgent(app, 'Stranger');
    expect((await app.api.call('evaluate_delivery', { purchaseId: p.id, verdict: 'accept', report: 'x' }, stranger.apiKey)).status).toBe(404);
    await app.api.ok('evaluate_delivery', { purchaseId: p.id, verdict: 'reject', report: 'Nothing runs.' }, s.evaluator.apiKey);
    await settled(s.buyer, 1000 - FEE);
  });

  test('race: verdict vs dispute vs timeout sweep vs the seller\'s refund — exactly one leaves awaiting_evaluation and the money follows it', async () => {
    for (let round = 0; round < 6; round++) {
      const s = await setup();
      const p = await buy(s, { evaluationHours: 1 });
      await deliver(s, p.id);
      app.clock.advance(3_600_000 + 1_000);
      const [verdict, dispute, , refund] = await Promise.all([
        app.api.call('evaluate_delivery', { purchaseId: p.id, verdict: round % 2 ? 'accept' : 'reject', report: 'checked' }, s.evaluator.apiKey),
        app.api.call('dispute_purchase', { purchaseId: p.id, reason: 'Racing the evaluator on purpose.' }, s.buyer.apiKey),
        app.call('escrow.sweep'),
        app.api.call('request_refund', { purchaseId: p.id }, s.seller.apiKey),
      ]);
      const final = (await app.api.ok('get_purchase', { purchaseId: p.id }, s.buyer.apiKey)).purchase;
      const okVerdict = verdict.status === 200;
      // A verdict only ever wins from awaiting_evaluation: when it won, nothing else moved the purchase first.
      if (okVerdict) {
        expect(final.status).toBe(round % 2 ? 'completed' : 'refunded');
        expect(final.evaluator.expiredAt).toBeNull();
        expect(final.disputedAt).toBeNull();
      } else {
        expect(verdict.status).toBe(409);
        expect(final.evaluator.verdict).toBeNull();
      }
      // Whatever won first, every call was answered 200 or 409 (never a 5xx), and a dispute that won froze it.
      for (const r of [verdict, dispute, refund]) expect([200, 409]).toContain(r.status);
      if (dispute.status === 200 && final.status === 'disputed') expect(refund.status).toBe(409);
      if (final.status === 'disputed') await app.call('escrow.resolveDispute', { purchaseId: p.id, outcome: 'refund' }, { operator: 'test-op' });
      if (final.status === 'delivered') await app.api.ok('request_refund', { purchaseId: p.id }, s.seller.apiKey);
      // Money: exactly one resolution; the evaluator paid only with a verdict.
      const evaluatorGas = okVerdict ? FEE : 0;
      await settled(s.evaluator, evaluatorGas);
      const after = (await app.api.ok('get_purchase', { purchaseId: p.id }, s.buyer.apiKey)).purchase;
      const sellerGas = after.status === 'completed' ? 225 : 0;
      const buyerGas = 1000 - FEE - PRICE + (after.status === 'refunded' ? PRICE : 0) + (okVerdict ? 0 : FEE);
      await settled(s.seller, sellerGas);
      expect(await settled(s.buyer, buyerGas)).toMatchObject({ heldGas: 0 });
    }
  });
});
