/**
 * Issue #35, the silent evaluator by hand (ADR 0040): in the sandbox an operator fires a purchase's running
 * timer now (`npm run admin -- purchases fire-timer <id>`: POST /api/admin/purchases/<id>/fire-timer, audited) instead of waiting evaluationHours. The timeout
 * takes the machine's own path: awaiting_evaluation → delivered, the buyer confirms; balances exact (seller +90 %
 * of the price, buyer −price, the fee back to the buyer), the ledger audit clean. With Stripe keys it is refused.
 */
import { describeWithPostgres, eventually, startTestApp, type TestApp } from '../../../test/kit';
import { expectLedgerClean } from '../../../test/kit/ledger';
import { newAgent, scenario, wallet } from './helpers';
import { run } from '../../../scripts/admin';

const TOKEN = 'test-admin-token-0123456789';
const FEE = 40;
const PRICE = 250;

async function fireTimer(app: TestApp, purchaseId: string) {
  const res = await fetch(`${app.baseUrl}/api/admin/purchases/${purchaseId}/fire-timer`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
  return { status: res.status, body: (await res.json()) as any };
}

describeWithPostgres('a silent evaluator, by hand (sandbox timer)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ postgres: true, env: { ADMIN_TOKEN: TOKEN } });
  });
  afterAll(async () => {
    await app?.stop();
  });
  afterEach(async () => {
    await expectLedgerClean(app);
  });

  test('purchase with an evaluator, deliver, no verdict, fire the timer: delivered; the buyer confirms; balances exact', async () => {
    const s = await scenario(app, { fundedGas: 1000 });
    const evaluator = await newAgent(app, 'Silent Evaluator');
    // The evaluator has a webhook (as notifications would tell escrow): its notice is written (issue #22).
    const escrow = app.broker.getLocalService('escrow') as any;
    await escrow.db.query(`INSERT INTO escrow.webhook_agents (agent_id, has_webhooks, version) VALUES ($1, true, 1)`, [evaluator.id]);
    const p = (await app.api.ok('purchase_service', { listingId: s.listingId, evaluator: { agentId: evaluator.id, feeGas: FEE } }, s.buyer.apiKey)).purchase;
    expect(p.priceGas).toBe(PRICE);
    // No timer is awaiting a delivery's evaluation yet; the delivery window's timer is the one running.
    await app.api.ok('deliver_work', { purchaseId: p.id, delivery: { summary: 'ten Jest tests, all green' } }, s.seller.apiKey);
    const awaiting = (await app.api.ok('get_purchase', { purchaseId: p.id }, s.buyer.apiKey)).purchase;
    expect(awaiting.status).toBe('awaiting_evaluation');
    // Each party's moves now, from the machine: the buyer may only dispute, the evaluator gives its verdict.
    expect(awaiting.task.tools).toEqual(['dispute_purchase']);
    expect((await app.api.ok('get_purchase', { purchaseId: p.id }, evaluator.apiKey)).purchase.task.tools).toEqual(['evaluate_delivery']);
    // The machine's notice evaluation_requested: its audience is the evaluator, its payload says until when.
    const notice = await escrow.db.query(`SELECT payload FROM escrow.outbox WHERE topic = 'escrow.purchase.evaluation_requested' AND payload->>'purchaseId' = $1`, [p.id]);
    expect(notice.rows[0].payload).toMatchObject({ evaluatorId: evaluator.id, status: 'awaiting_evaluation', evaluateBy: awaiting.evaluator.evaluateBy, verdict: null });

    // The operator's command (npm run admin -- purchases fire-timer <id>).
    const out: string[] = [];
    await run(['purchases', 'fire-timer', p.id], { baseUrl: app.baseUrl, token: TOKEN }, (l) => out.push(l));
    expect(out.join('\n')).toBe(`Timer evaluation_expired of ${p.id} fired: the purchase is delivered.`);
    const delivered = (await app.api.ok('get_purchase', { purchaseId: p.id }, s.buyer.apiKey)).purchase;
    expect(delivered).toMatchObject({ status: 'delivered', evaluator: { verdict: null } });
    expect(delivered.autoReleaseAt).toEqual(expect.any(String));
    expect(delivered.task.tools).toEqual(['confirm_delivery', 'request_refund', 'dispute_purchase']);
    // Nothing moved yet: price + fee still held.
    expect(await wallet(app, s.buyer)).toMatchObject({ gasBalance: 1000 - PRICE - FEE, heldGas: PRICE + FEE });

    await app.api.ok('confirm_delivery', { purchaseId: p.id }, s.buyer.apiKey);
    await eventually(async () => ((await wallet(app, s.seller)).gasBalance === 225 ? true : null));
    expect(await wallet(app, s.buyer)).toMatchObject({ gasBalance: 1000 - PRICE, heldGas: 0 });
    expect(await wallet(app, evaluator)).toMatchObject({ gasBalance: 0 });

    // Firing again: no timer runs in a final state. The operator's audit log has both attempts.
    const again = await fireTimer(app, p.id);
    expect([again.status, again.body.error.code]).toEqual([409, 'invalid_state']);
    const log = await fetch(`${app.baseUrl}/api/admin/audit-log?action=purchases.fire_timer`, { headers: { authorization: `Bearer ${TOKEN}` } }).then((r) => r.json() as Promise<any>);
    expect(log.result.entries.filter((e: any) => e.target === p.id).map((e: any) => e.ok).sort()).toEqual([false, true]);
  });
});

describeWithPostgres('firing a timer early is refused with real money', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ postgres: true, env: { ADMIN_TOKEN: TOKEN, STRIPE_SECRET_KEY: 'sk_test_x', STRIPE_WEBHOOK_SECRET: 'whsec_x' } });
  });
  afterAll(async () => {
    await app?.stop();
  });

  test('Stripe configured: 403, the purchase untouched', async () => {
    const r = await fireTimer(app, 'pur_anything');
    expect([r.status, r.body.error.code]).toEqual([403, 'forbidden']);
  });
});
