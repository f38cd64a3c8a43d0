/**
 * Buying gas with Stripe: the real `stripe` SDK against the local stand-in of the Stripe API,
 * webhooks signed with the SDK's test-header helper and posted to the gateway's raw-body route.
 */
import Stripe from 'stripe';
import { eventually, startTestApp, type TestApp } from '../../../test/kit';
import { startStripeStandIn, type StripeStandIn } from '../../../test/kit/stripe-standin';
import { expectLedgerClean } from '../../../test/kit/ledger';
import { openPage, postPageForm } from '../../../test/kit/checkout';

describe('Stripe checkout (real SDK, local stand-in)', () => {
  let stripe: StripeStandIn;
  let app: TestApp;

  beforeAll(async () => {
    stripe = await startStripeStandIn();
    app = await startTestApp({
      env: { STRIPE_SECRET_KEY: stripe.secretKey, STRIPE_WEBHOOK_SECRET: stripe.webhookSecret, STRIPE_API_BASE: stripe.url },
    });
  });
  afterAll(async () => {
    await app?.stop();
    await stripe?.stop();
  });
  afterEach(async () => {
    await expectLedgerClean(app);
  });

  const post = async (body: string, signature?: string) => {
    const res = await fetch(`${app.baseUrl}/api/payments/stripe/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(signature ? { 'stripe-signature': signature } : {}) },
      body,
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const balance = async (agentId: string) => (await app.call('ledger.balance', { agentId })).gasBalance;

  async function buyer(name: string) {
    const { apiKey, agent } = await app.api.register(name);
    const buy = await app.api.ok('buy_gas', { packId: 'starter' }, apiKey);
    return { apiKey, agentId: agent.id as string, buy };
  }

  it('creates a Checkout Session and credits once on a genuine webhook, even when it is duplicated', async () => {
    const { apiKey, agentId, buy } = await buyer('Stripe Buyer');
    expect(buy).toMatchObject({ sessionId: expect.stringMatching(/^cs_test_/), packId: 'starter', gas: 500, usd: 5 });
    // The human first passes through this service's own page (limits), which continues to Stripe's.
    expect(buy.checkoutUrl).toBe(`${app.config.publicBaseUrl}/checkout/${buy.sessionId}`);
    const s = stripe.sessions.get(buy.sessionId)!;
    expect(s).toMatchObject({ mode: 'payment', currency: 'usd', amount_total: 500, client_reference_id: agentId, metadata: { agentId, packId: 'starter' } });
    expect(new Date(buy.expiresAt).getTime()).toBe(s.expires_at * 1000);

    stripe.markPaid(buy.sessionId);
    const event = stripe.signedEvent('checkout.session.completed', buy.sessionId);
    const first = await post(event.payload, event.signature);
    expect(first.status).toBe(200);
    expect(first.body.result).toMatchObject({ received: true, outcome: 'credited', credited: true });
    const dup = await post(event.payload, event.signature);
    expect(dup.status).toBe(200);
    expect(dup.body.result).toMatchObject({ outcome: 'already_credited', credited: false });
    // Stripe retries concurrently, with fresh event ids, and sends async_payment_succeeded too.
    const more = [
      stripe.signedEvent('checkout.session.completed', buy.sessionId),
      stripe.signedEvent('checkout.session.async_payment_succeeded', buy.sessionId),
      event,
    ];
    const results = await Promise.all(more.map((e) => post(e.payload, e.signature)));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);

    const wallet = await app.api.ok('wallet', {}, apiKey);
    expect(wallet.gasBalance).toBe(500);
    expect(wallet.entries).toHaveLength(1);
    expect(wallet.entries[0]).toMatchObject({ type: 'gas_purchase', amountGas: 500, sessionId: buy.sessionId });
  });

  it('a human sets limits on our page, pays on the hosted page (form POST); the webhook credits; the receipt gives that browser the owner link once', async () => {
    const { apiKey, agentId, buy } = await buyer('Hosted Page');
    stripe.setWebhookUrl(`${app.baseUrl}/api/payments/stripe/webhook`);
    try {
      const ours = await openPage(`${app.baseUrl}${new URL(buy.checkoutUrl).pathname}`);
      expect(ours.html).toContain('name="dailyBudgetGas"');
      const next = await postPageForm(`${app.baseUrl}/checkout/${buy.sessionId}/continue`, ours, { limitsForm: '1', dailyBudgetGas: '300', approvalAboveGas: '100' });
      expect(next.status).toBe(303);
      const stripePage = next.location!;
      expect(stripePage).toBe(`${stripe.url}/pay/${buy.sessionId}`);
      // Not paid yet: the limits wait for the payment.
      expect((await app.api.ok('whoami', {}, apiKey)).agent.spendingLimits.dailyBudgetGas).toBeNull();
      const page = await fetch(stripePage);
      expect(await page.text()).toContain('<form method="post">');
      expect((await fetch(stripePage, { method: 'POST' })).status).toBe(200);
      // Nothing polls wallet/whoami and the sweeper is off in tests: only the webhook can credit.
      await eventually(async () => (await balance(agentId)) === 500);
      // Another browser (the agent) returning to the receipt gets no owner link and applies nothing.
      const stranger = await fetch(`${app.baseUrl}/checkout/done?session_id=${buy.sessionId}`);
      expect(await stranger.text()).not.toMatch(/\/owner\//);
      const done = await fetch(`${app.baseUrl}/checkout/done?session_id=${buy.sessionId}`, { headers: { cookie: next.cookie } });
      expect(await done.text()).toMatch(/\/owner\/[A-Za-z0-9_-]{20,}/);
      expect((await app.api.ok('whoami', {}, apiKey)).agent.spendingLimits).toMatchObject({ dailyBudgetGas: 300, approvalAboveGas: 100 });
      const again = await fetch(`${app.baseUrl}/checkout/done?session_id=${buy.sessionId}`, { headers: { cookie: next.cookie } });
      expect(await again.text()).not.toMatch(/\/owner\//);
    } finally {
      stripe.setWebhookUrl(null);
    }
  });

  it('issue #23: the agent submitting the page after its human (no limits) is refused; after payment only the human gets the owner link', async () => {
    const { apiKey, agentId, buy } = await buyer('Owner Link Target');
    const pageUrl = `${app.baseUrl}${new URL(buy.checkoutUrl).pathname}`;
    const human = await openPage(pageUrl);
    const agent = await openPage(pageUrl);
    const humanNext = await postPageForm(`${app.baseUrl}/checkout/${buy.sessionId}/continue`, human, { limitsForm: '1', dailyBudgetGas: '300', approvalAboveGas: '100' });
    expect(humanNext.status).toBe(303);
    const agentNext = await postPageForm(`${app.baseUrl}/checkout/${buy.sessionId}/continue`, agent, { limitsForm: '1' });
    expect(agentNext.status).toBe(409);
    expect(agentNext.html).toMatch(/Another browser is paying this checkout/);
    expect(agentNext.location).toBeNull();
    // The human resubmits (same browser): allowed, the limits are replaced.
    const again = await postPageForm(`${app.baseUrl}/checkout/${buy.sessionId}/continue`, { cookie: humanNext.cookie, csrf: human.csrf }, { limitsForm: '1', dailyBudgetGas: '300', approvalAboveGas: '100' });
    expect(again.status).toBe(303);
    stripe.markPaid(buy.sessionId);
    const agentDone = await fetch(`${app.baseUrl}/checkout/done?session_id=${buy.sessionId}`, { headers: { cookie: agentNext.cookie } });
    const agentHtml = await agentDone.text();
    expect(agentHtml).not.toMatch(/\/owner\//);
    expect(agentHtml).toMatch(/this visit gets no owner link and changes nothing/);
    expect((await app.api.ok('whoami', {}, apiKey)).agent.spendingLimits.dailyBudgetGas).toBeNull();
    const humanDone = await fetch(`${app.baseUrl}/checkout/done?session_id=${buy.sessionId}`, { headers: { cookie: again.cookie } });
    expect(await humanDone.text()).toMatch(/\/owner\/[A-Za-z0-9_-]{20,}/);
    expect((await app.api.ok('whoami', {}, apiKey)).agent.spendingLimits).toMatchObject({ dailyBudgetGas: 300, approvalAboveGas: 100 });
    // After the payment the agent's page has nothing to submit.
    const late = await postPageForm(`${app.baseUrl}/checkout/${buy.sessionId}/continue`, agent, { limitsForm: '1' });
    expect(late.status).toBe(409);
    expect((await app.api.ok('whoami', {}, apiKey)).agent.spendingLimits).toMatchObject({ dailyBudgetGas: 300, approvalAboveGas: 100 });
    expect(await balance(agentId)).toBe(500);
  });

  it('bad signature, forged, tampered, stale and malformed webhooks are 400 and credit nothing', async () => {
    const { agentId, buy } = await buyer('Forgery Target');
    const paidObject = { ...stripe.sessions.get(buy.sessionId)!, status: 'complete', payment_status: 'paid' };
    const wrongSecret = stripe.signedEvent('checkout.session.completed', buy.sessionId, { object: paidObject, secret: 'whsec_not_the_secret' });
    const genuine = stripe.signedEvent('checkout.session.completed', buy.sessionId, { object: paidObject });
    const tampered = genuine.payload.replace('"amount_total": 500', '"amount_total": 50000');
    const stale = stripe.signedEvent('checkout.session.completed', buy.sessionId, {
      object: paidObject,
      timestamp: Math.floor(Date.now() / 1000) - 3600,
    });
    const notJson = 'this is not json';
    const notJsonSig = Stripe.webhooks.generateTestHeaderString({ payload: notJson, secret: stripe.webhookSecret });

    const attempts = [
      await post(wrongSecret.payload, wrongSecret.signature),
      await post(genuine.payload, 't=123,v1=0000000000000000000000000000000000000000000000000000000000000000'),
      await post(genuine.payload),
      await post(tampered, genuine.signature),
      await post(stale.payload, stale.signature),
      await post(notJson, notJsonSig),
      await post('', genuine.signature),
    ];
    for (const a of attempts) {
      expect(a.status).toBe(400);
      expect(a.body).toMatchObject({ ok: false, error: { code: 'invalid_arguments', hint: expect.any(String) } });
    }
    expect(await balance(agentId)).toBe(0);
    // The session is still unpaid at Stripe, so reconciliation credits nothing either.
    await app.call('payments.reconcileAgent', { agentId });
    expect(await balance(agentId)).toBe(0);
  });

  it('a genuine event for a session that does not match what we created credits nothing', async () => {
    const { agentId, buy } = await buyer('Mismatch');
    const wrongAmount = { ...stripe.sessions.get(buy.sessionId)!, status: 'complete', payment_status: 'paid', amount_total: 1 };
    const e = stripe.signedEvent('checkout.session.completed', buy.sessionId, { object: wrongAmount });
    const r = await post(e.payload, e.signature);
    expect(r.status).toBe(200);
    expect(r.body.result.outcome).toBe('not_paid');
    const unknown = stripe.signedEvent('checkout.session.completed', buy.sessionId, { object: { ...wrongAmount, id: 'cs_test_someone_else' } });
    expect((await post(unknown.payload, unknown.signature)).body.result.outcome).toBe('unknown_session');
    expect(await balance(agentId)).toBe(0);
  });

  it('a lost webhook is made good by the reconciliation sweeper; polling wallet or whoami never credits by itself', async () => {
    const { apiKey, agentId, buy } = await buyer('Lost Webhook');
    stripe.markPaid(buy.sessionId);
    // Reads never write: the wallet shows what the ledger has, nothing more.
    expect((await app.api.ok('wallet', {}, apiKey)).gasBalance).toBe(0);
    expect((await app.api.ok('whoami', {}, apiKey)).agent.gasBalance).toBe(0);
    await eventually(async () => {
      await app.call('payments.sweepCheckouts');
      return (await app.api.ok('wallet', {}, apiKey)).gasBalance === 500;
    });
    expect((await app.api.ok('wallet', {}, apiKey)).entries).toHaveLength(1);

    const second = await app.api.ok('buy_gas', { packId: 'starter' }, apiKey);
    stripe.markPaid(second.sessionId);
    await app.call('payments.reconcileAgent', { agentId });
    expect((await app.api.ok('whoami', {}, apiKey)).agent.gasBalance).toBe(1000);
    // The late webhook then changes nothing.
    const late = stripe.signedEvent('checkout.session.completed', second.sessionId);
    expect((await post(late.payload, late.signature)).body.result.credited).toBe(false);
    expect(await balance(agentId)).toBe(1000);
  });

  it('the periodic sweeper credits a paid session nobody polls', async () => {
    const { agentId, buy } = await buyer('Nobody Polls');
    stripe.markPaid(buy.sessionId);
    await eventually(async () => {
      await app.call('payments.sweepCheckouts');
      return (await balance(agentId)) === 500;
    });
  });

  it('Stripe refusing the request is 503 service_unavailable with a hint, and creates nothing', async () => {
    const broken = await startTestApp({
      env: { STRIPE_SECRET_KEY: 'sk_test_wrong_key', STRIPE_WEBHOOK_SECRET: stripe.webhookSecret, STRIPE_API_BASE: stripe.url },
    });
    try {
      const { apiKey, agent } = await broken.api.register('Unlucky');
      const r = await broken.api.call('buy_gas', { packId: 'starter' }, apiKey);
      expect(r.status).toBe(503);
      expect(r.body.error).toMatchObject({ code: 'service_unavailable', hint: expect.stringContaining('Retry') });
      expect(await broken.call('payments.reconcileAgent', { agentId: agent.id })).toEqual({ checked: 0, credited: 0 });
    } finally {
      await broken.stop();
    }
  });

  it('expired and unpaid sessions credit nothing; a delayed payment credits when it succeeds', async () => {
    const { apiKey, agentId, buy } = await buyer('Expired');
    const res = await fetch(`${stripe.url}/v1/checkout/sessions/${buy.sessionId}/expire`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stripe.secretKey}` },
    });
    expect(res.status).toBe(200);
    expect((await app.api.ok('wallet', {}, apiKey)).gasBalance).toBe(0);
    // Reconciliation (the sweeper's job; reads never write) learns the session expired.
    await app.call('payments.reconcileAgent', { agentId });
    expect((await app.call('payments.getCheckout', { sessionId: buy.sessionId })).status).toBe('expired');
    const expiredEvent = stripe.signedEvent('checkout.session.expired', buy.sessionId);
    expect((await post(expiredEvent.payload, expiredEvent.signature)).status).toBe(200);

    const delayed = await app.api.ok('buy_gas', { packId: 'starter' }, apiKey);
    stripe.markPaid(delayed.sessionId, { asyncPending: true });
    const unpaid = stripe.signedEvent('checkout.session.completed', delayed.sessionId);
    expect((await post(unpaid.payload, unpaid.signature)).body.result.outcome).toBe('not_paid');
    expect((await app.api.ok('wallet', {}, apiKey)).gasBalance).toBe(0);

    stripe.markAsyncSucceeded(delayed.sessionId);
    const ok = stripe.signedEvent('checkout.session.async_payment_succeeded', delayed.sessionId);
    expect((await post(ok.payload, ok.signature)).body.result.credited).toBe(true);
    expect(await balance(agentId)).toBe(500);
  });
});
