/**
 * A retry gets the first answer (issue 38): every buyer and seller step — deliver_work, confirm_delivery,
 * request_refund (both kinds), dispute_purchase, rate_purchase — repeated after it succeeded answers 200 with the
 * same body, never 409: from the gateway's stored answer (same Idempotency-Key), from escrow itself when that
 * answer is gone (the key's row lost, or a failover re-send that reaches escrow again). Without a key a repeat is
 * refused as before (409 invalid_state). Money moves once: every case ends with the ledger audit.
 */
import { describeWithPostgres, startTestApp, type TestApp, type ToolResponse } from '../../../test/kit';
import { expectLedgerClean } from '../../../test/kit/ledger';
import { gasAddsUp, scenario, wallet, type Scenario, type TestAgent } from './helpers';

function suite(postgres: boolean) {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ postgres });
  });
  afterAll(async () => app?.stop());
  afterEach(async () => expectLedgerClean(app));

  let n = 0;
  const gatewayDb = () => (app.broker.getLocalService('gateway') as unknown as { db: { query(sql: string, params: unknown[]): Promise<unknown> } }).db;

  /**
   * Calls `tool` with a fresh key, then repeats it: with the key (the gateway's stored answer), with the key after
   * the stored answer is deleted (escrow answers), and with a new key: 200 and the first body. Without a key: 409.
   */
  async function stepAndRepeats(tool: string, args: Record<string, unknown>, who: TestAgent, keyless: 'refused' | 'legal again' = 'refused'): Promise<ToolResponse> {
    const key = `repeat-${tool}-${++n}`;
    const first = await app.api.call(tool, args, who.apiKey, { 'idempotency-key': key });
    expect(first.status).toBe(200);
    const replayed = await app.api.call(tool, args, who.apiKey, { 'idempotency-key': key });
    expect(replayed.status).toBe(200);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body).toEqual(first.body);

    // The gateway's record lost: the same key reaches escrow again, which recognises its own step.
    await gatewayDb().query('DELETE FROM gateway.idempotency WHERE key = $1', [key]);
    const again = await app.api.call(tool, args, who.apiKey, { 'idempotency-key': key });
    expect({ status: again.status, body: again.body }).toEqual({ status: 200, body: first.body });
    expect(again.headers.get('idempotent-replayed')).toBeNull();

    const rekeyed = await app.api.call(tool, args, who.apiKey, { 'idempotency-key': `${key}-new` });
    expect({ status: rekeyed.status, body: rekeyed.body }).toEqual({ status: 200, body: first.body });
    const again2 = await app.api.call(tool, args, who.apiKey);
    if (keyless === 'refused') expect({ status: again2.status, code: again2.body.error?.code }).toEqual({ status: 409, code: 'invalid_state' });
    else expect(again2.status).toBe(200); // a rating may be changed within 7 days: the same rating again is legal
    return first;
  }

  async function bought(s: Scenario): Promise<string> {
    return (await app.api.ok('purchase_service', { listingId: s.listingId }, s.buyer.apiKey)).purchase.id;
  }

  test('deliver_work, confirm_delivery, rate_purchase: each repeat answers the first answer; the sale settles once', async () => {
    const s = await scenario(app);
    const purchaseId = await bought(s);
    const delivered = await stepAndRepeats('deliver_work', { purchaseId, delivery: { summary: 'Twelve tests, all green.', files: ['a.test.ts'] } }, s.seller);
    expect(delivered.body.result.purchase.status).toBe('delivered');
    // A different delivery is not a repeat: still refused.
    const other = await app.api.call('deliver_work', { purchaseId, delivery: { summary: 'Something else.' } }, s.seller.apiKey);
    expect(other.status).toBe(409);

    const confirmed = await stepAndRepeats('confirm_delivery', { purchaseId }, s.buyer);
    expect(confirmed.body.result.purchase.status).toBe('completed');
    const rated = await stepAndRepeats('rate_purchase', { purchaseId, rating: 5, comment: 'Great.' }, s.buyer, 'legal again');
    expect(rated.body.result.purchase.rating).toBe(5);

    // The seller's keyed retry of deliver_work after the buyer confirmed: 200, the purchase as it is now.
    const late = await app.api.call('deliver_work', { purchaseId, delivery: { summary: 'Twelve tests, all green.', files: ['a.test.ts'] } }, s.seller.apiKey, { 'idempotency-key': `late-${purchaseId}` });
    expect(late.status).toBe(200);
    expect(late.body.result.purchase.status).toBe('completed');

    // Settled exactly once: 250 gas, 10 % fee.
    expect(await wallet(app, s.seller)).toMatchObject({ gasBalance: 225, lifetimeEarnedGas: 225 });
    await gasAddsUp(app, s);
  });

  test('request_refund (refund at once, and a request after delivery) and dispute_purchase: each repeat answers the first answer', async () => {
    const s = await scenario(app, { fundedGas: 1000 });
    const refundedNow = await bought(s);
    const refunded = await stepAndRepeats('request_refund', { purchaseId: refundedNow, reason: 'Changed my mind.' }, s.buyer);
    expect(refunded.body.result.purchase.status).toBe('refunded');

    const requested = await bought(s);
    await app.api.ok('deliver_work', { purchaseId: requested, delivery: { summary: 'Done.' } }, s.seller.apiKey);
    const asked = await stepAndRepeats('request_refund', { purchaseId: requested, reason: 'Tests do not compile.' }, s.buyer);
    expect(asked.body.result.purchase).toMatchObject({ status: 'delivered', refundRequestedAt: expect.any(String) });
    // Another reason is another request: still refused (one request per purchase).
    expect((await app.api.call('request_refund', { purchaseId: requested, reason: 'Another reason.' }, s.buyer.apiKey)).status).toBe(409);

    const sellerRefund = await bought(s);
    const bySeller = await stepAndRepeats('request_refund', { purchaseId: sellerRefund }, s.seller);
    expect(bySeller.body.result.purchase.status).toBe('refunded');

    const disputedId = await bought(s);
    const disputed = await stepAndRepeats('dispute_purchase', { purchaseId: disputedId, reason: 'Nothing was delivered on time.' }, s.buyer);
    expect(disputed.body.result.purchase.status).toBe('disputed');
    // The other party's dispute is not the buyer's repeat.
    expect((await app.api.call('dispute_purchase', { purchaseId: disputedId, reason: 'Nothing was delivered on time.' }, s.seller.apiKey)).status).toBe(409);

    // Two refunds voided once each; the request and the dispute still hold their gas.
    expect(await wallet(app, s.buyer)).toMatchObject({ gasBalance: 1000 - 4 * 250 + 2 * 250, heldGas: 2 * 250 });
    await gasAddsUp(app, s);
  });
}

describe('a step repeated after its success answers the first answer (PGlite, in-process)', () => suite(false));
describeWithPostgres('a step repeated after its success answers the first answer (PostgreSQL)', () => suite(true));
