/**
 * Issue #35, evaluators' reputation, on real PostgreSQL: an evaluator's signals (evaluations, accepted,
 * rejected, timed out) on its whoami and on its public record (get_agent), the buyer's rating of the evaluator (rate_purchase target
 * "evaluator": once, final purchases only, buyer only, only a purchase that had an evaluator), and
 * search_services' minEvaluatedSales (sales an evaluator accepted). Every test ends with the ledger audit.
 */
import { describeWithPostgres, eventually, startTestApp, type TestApp } from '../../../test/kit';
import { expectLedgerClean } from '../../../test/kit/ledger';
import { newAgent, scenario, wallet, type Scenario, type TestAgent } from './helpers';

const FEE = 40;

describeWithPostgres("evaluators' reputation (issue #35) on PostgreSQL", () => {
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

  async function setup(): Promise<Scenario & { evaluator: TestAgent }> {
    const s = await scenario(app, { fundedGas: 2000 });
    const evaluator = await newAgent(app, 'Evaluator');
    return { ...s, evaluator };
  }

  async function buyAndDeliver(s: Scenario & { evaluator: TestAgent }, extra: Record<string, unknown> = {}) {
    const p = (await app.api.ok('purchase_service', { listingId: s.listingId, evaluator: { agentId: s.evaluator.id, feeGas: FEE }, ...extra }, s.buyer.apiKey)).purchase;
    await app.api.ok('deliver_work', { purchaseId: p.id, delivery: { summary: 'ten Jest tests, all green' } }, s.seller.apiKey);
    return p.id as string;
  }

  const evaluatorOf = async (agent: TestAgent) => (await app.api.ok('whoami', {}, agent.apiKey)).agent.evaluator;

  async function expectRefused(args: Record<string, unknown>, who: TestAgent, status: number, code: string, hint: RegExp) {
    const r = await app.api.call('rate_purchase', args, who.apiKey);
    expect(r.status).toBe(status);
    expect(r.body.error!.code).toBe(code);
    expect(r.body.error!.hint).toMatch(hint);
  }

  test('accept, reject and a timeout show on the evaluator\'s whoami; the buyer rates it once per final purchase', async () => {
    const s = await setup();
    expect(await evaluatorOf(s.evaluator)).toEqual({ evaluations: 0, accepted: 0, rejected: 0, timedOut: 0, ratingAvg: null, ratingCount: 0 });

    const accepted = await buyAndDeliver(s);
    // Not final yet: awaiting the verdict.
    await expectRefused({ purchaseId: accepted, rating: 5, target: 'evaluator' }, s.buyer, 409, 'invalid_state', /evaluate_delivery|evaluator/);
    await app.api.ok('evaluate_delivery', { purchaseId: accepted, verdict: 'accept', report: 'All tests pass.' }, s.evaluator.apiKey);
    const rejected = await buyAndDeliver(s);
    await app.api.ok('evaluate_delivery', { purchaseId: rejected, verdict: 'reject', report: '3 of 12 tests fail.' }, s.evaluator.apiKey);
    const silent = await buyAndDeliver(s, { evaluationHours: 1 });
    app.clock.advance(3_600_000 + 60_000);
    await app.call('escrow.sweep');
    expect((await app.api.ok('get_purchase', { purchaseId: silent }, s.buyer.apiKey)).purchase.status).toBe('delivered');
    await app.api.ok('confirm_delivery', { purchaseId: silent }, s.buyer.apiKey);

    expect(await evaluatorOf(s.evaluator)).toEqual({ evaluations: 3, accepted: 1, rejected: 1, timedOut: 1, ratingAvg: null, ratingCount: 0 });
    // The seller's and buyer's own evaluator signals stay empty.
    expect(await evaluatorOf(s.seller)).toMatchObject({ evaluations: 0 });

    // The buyer rates the evaluator: once on each final purchase; the seller's rating is separate.
    const rated = (await app.api.ok('rate_purchase', { purchaseId: accepted, rating: 5, target: 'evaluator' }, s.buyer.apiKey)).purchase;
    expect(rated.evaluator.rating).toBe(5);
    expect(rated.rating).toBeNull();
    await expectRefused({ purchaseId: accepted, rating: 1, target: 'evaluator' }, s.buyer, 409, 'invalid_state', /final/);
    // A keyed retry of the same rating (its first answer lost) answers the purchase as it is (ADR 0035); another value is refused.
    const retry = await app.api.call('rate_purchase', { purchaseId: accepted, rating: 5, target: 'evaluator' }, s.buyer.apiKey, { 'Idempotency-Key': 'rate-ev-retry-1' });
    expect(retry.status).toBe(200);
    expect(retry.body.result.purchase.evaluator.rating).toBe(5);
    await app.api.ok('rate_purchase', { purchaseId: rejected, rating: 2, target: 'evaluator' }, s.buyer.apiKey);
    await app.api.ok('rate_purchase', { purchaseId: silent, rating: 1, target: 'evaluator' }, s.buyer.apiKey);
    // Not the buyer: the seller and the evaluator itself are refused.
    await expectRefused({ purchaseId: rejected, rating: 5, target: 'evaluator' }, s.seller, 403, 'forbidden', /buyer/);
    await expectRefused({ purchaseId: rejected, rating: 5, target: 'evaluator' }, s.evaluator, 403, 'forbidden', /evaluat/);
    expect(await evaluatorOf(s.evaluator)).toEqual({ evaluations: 3, accepted: 1, rejected: 1, timedOut: 1, ratingAvg: 2.67, ratingCount: 3 });
    // Rating the seller is unchanged by it.
    expect((await app.api.ok('rate_purchase', { purchaseId: accepted, rating: 4 }, s.buyer.apiKey)).purchase).toMatchObject({ rating: 4, evaluator: { rating: 5 } });

    // Its public record: another agent choosing an evaluator reads the same signals with get_agent (never its balance or limits).
    const stranger = await newAgent(app, 'Stranger');
    const record = (await app.api.ok('get_agent', { agentId: s.evaluator.id }, stranger.apiKey)).agent;
    expect(record).toEqual({
      id: s.evaluator.id,
      displayName: expect.any(String),
      isSeed: false,
      reputation: expect.objectContaining({ salesCount: 0, evaluatedSalesCount: 0 }),
      evaluator: { evaluations: 3, accepted: 1, rejected: 1, timedOut: 1, ratingAvg: 2.67, ratingCount: 3 },
      createdAt: expect.any(String),
    });
    expect(record).not.toHaveProperty('gasBalance');
    expect(record).not.toHaveProperty('spendingLimits');
    const unknown = await app.api.call('get_agent', { agentId: 'agt_nobody_here' }, stranger.apiKey);
    expect([unknown.status, unknown.body.error!.code]).toEqual([404, 'not_found']);
    expect((await app.api.call('get_agent', { agentId: s.evaluator.id })).status).toBe(401);

    // Balances: seller 2 × 225, evaluator 2 fees (accept, reject), buyer −3 prices −2 fees + 1 price back.
    await eventually(async () => ((await wallet(app, s.evaluator)).gasBalance === 2 * FEE ? true : null));
    expect(await wallet(app, s.seller)).toMatchObject({ gasBalance: 450 });
    expect(await wallet(app, s.buyer)).toMatchObject({ gasBalance: 2000 - 2 * 250 - 2 * FEE, heldGas: 0 });
  });

  test('search_services minEvaluatedSales keeps sellers with sales an evaluator accepted; the count is on their reputation', async () => {
    const s = await setup();
    const plain = await scenario(app, { fundedGas: 1000 });
    const search = async (sellerId: string, extra: Record<string, unknown> = {}) =>
      (await app.api.ok('search_services', { sellerId, ...extra })).listings as Array<{ id: string; seller: { reputation: { salesCount: number; evaluatedSalesCount: number } } }>;
    // A sale without an evaluator, and a rejected evaluated delivery, do not count; an accepted one does.
    const p = (await app.api.ok('purchase_service', { listingId: plain.listingId }, plain.buyer.apiKey)).purchase;
    await app.api.ok('deliver_work', { purchaseId: p.id, delivery: { summary: 'done' } }, plain.seller.apiKey);
    await app.api.ok('confirm_delivery', { purchaseId: p.id }, plain.buyer.apiKey);
    const rejected = await buyAndDeliver(s);
    await app.api.ok('evaluate_delivery', { purchaseId: rejected, verdict: 'reject', report: 'fails' }, s.evaluator.apiKey);
    await eventually(async () => ((await search(plain.seller.id))[0]!.seller.reputation.salesCount === 1 ? true : null));
    expect((await search(plain.seller.id))[0]!.seller.reputation.evaluatedSalesCount).toBe(0);
    expect(await search(plain.seller.id, { minEvaluatedSales: 1 })).toEqual([]);
    expect((await search(s.seller.id))[0]!.seller.reputation).toMatchObject({ salesCount: 0, evaluatedSalesCount: 0 });

    const accepted = await buyAndDeliver(s);
    await app.api.ok('evaluate_delivery', { purchaseId: accepted, verdict: 'accept', report: 'passes' }, s.evaluator.apiKey);
    const found = await eventually(async () => {
      const r = await search(s.seller.id, { minEvaluatedSales: 1 });
      return r.length === 1 ? r : null;
    });
    expect(found[0]!.id).toBe(s.listingId);
    expect(found[0]!.seller.reputation).toMatchObject({ salesCount: 1, evaluatedSalesCount: 1 });
    expect(await search(s.seller.id, { minEvaluatedSales: 2 })).toEqual([]);
    // The seller sees the count on its own whoami too.
    expect((await app.api.ok('whoami', {}, s.seller.apiKey)).agent.reputation.evaluatedSalesCount).toBe(1);
    const bad = await app.api.call('search_services', { minEvaluatedSales: -1 });
    expect(bad.status).toBe(400);
    expect(bad.body.error!.code).toBe('invalid_arguments');
    await eventually(async () => ((await wallet(app, s.evaluator)).gasBalance === 2 * FEE ? true : null));
  });

  test('a purchase without an evaluator has none to rate (a hint to rate the seller)', async () => {
    const s = await setup();
    const p = (await app.api.ok('purchase_service', { listingId: s.listingId }, s.buyer.apiKey)).purchase;
    await app.api.ok('deliver_work', { purchaseId: p.id, delivery: { summary: 'done' } }, s.seller.apiKey);
    await app.api.ok('confirm_delivery', { purchaseId: p.id }, s.buyer.apiKey);
    await expectRefused({ purchaseId: p.id, rating: 5, target: 'evaluator' }, s.buyer, 409, 'invalid_state', /without target/);
    await expectRefused({ purchaseId: p.id, rating: 6, target: 'evaluator' }, s.buyer, 400, 'invalid_arguments', /./);
    await eventually(async () => ((await wallet(app, s.seller)).gasBalance === 225 ? true : null));
  });

  test('a refund before delivery: the evaluator never evaluated and cannot be rated', async () => {
    const s = await setup();
    const p = (await app.api.ok('purchase_service', { listingId: s.listingId, evaluator: { agentId: s.evaluator.id, feeGas: FEE } }, s.buyer.apiKey)).purchase;
    await app.api.ok('request_refund', { purchaseId: p.id, reason: 'Changed my mind before delivery.' }, s.buyer.apiKey);
    await expectRefused({ purchaseId: p.id, rating: 5, target: 'evaluator' }, s.buyer, 409, 'invalid_state', /delivered/);
    expect(await evaluatorOf(s.evaluator)).toMatchObject({ evaluations: 0, ratingCount: 0 });
    await eventually(async () => ((await wallet(app, s.buyer)).gasBalance === 2000 ? true : null));
  });
});
