/**
 * Buying gas with Stripe: the real `stripe` SDK against the local stand-in of the Stripe API,
 * webhooks signed with the SDK's test-header helper and posted to the gateway's raw-body route.
 */
import Stripe from 'stripe';
import { describeWithPostgres, eventually, startTestApp, type TestApp } from '../../../test/kit';
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
  /** This server's page at the path and query of a URL it made (PUBLIC_BASE_URL is not this test server). */
  const here = (url: string) => {
    const u = new URL(url);
    return `${app.baseUrl}${u.pathname}${u.search}`;
  };
  /** Where Stripe sends the payer's browser after paying: success_url, with its one-time claim secret. */
  const payerReturn = (sessionId: string) => here(stripe.sessions.get(sessionId)!.success_url!.replace('{CHECKOUT_SESSION_ID}', sessionId));
  const done = async (url: string, cookie = '') => (await fetch(url, { headers: cookie ? { cookie } : {} })).text();
  const OWNER_LINK = /\/owner\/[A-Za-z0-9_-]{20,}/;

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
      // Paying sends the browser to success_url; the claim secret is in it, and nowhere the agent can see.
      const paid = await fetch(stripePage, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'return=1', redirect: 'manual' });
      expect(paid.status).toBe(303);
      const receipt = here(paid.headers.get('location')!);
      expect(receipt).toMatch(new RegExp(`/checkout/done\\?session_id=${buy.sessionId}&claim=[A-Za-z0-9_-]{40,}$`));
      for (const seen of [buy.checkoutUrl, stripePage, ours.html, next.html, JSON.stringify(await app.api.ok('get_checkout', {}, apiKey))]) {
        expect(seen).not.toContain(new URL(receipt).searchParams.get('claim'));
      }
      // Nothing polls wallet/whoami and the sweeper is off in tests: only the webhook can credit.
      await eventually(async () => (await balance(agentId)) === 500);
      // Another browser (the agent) returning to the receipt without the claim gets no owner link and applies
      // nothing; nor does the browser that staged the limits, without it (issue #39: the cookie is not the payer).
      expect(await done(`${app.baseUrl}/checkout/done?session_id=${buy.sessionId}`)).not.toMatch(/\/owner\//);
      expect(await done(`${app.baseUrl}/checkout/done?session_id=${buy.sessionId}`, next.cookie)).not.toMatch(/\/owner\//);
      expect((await app.api.ok('whoami', {}, apiKey)).agent.spendingLimits.dailyBudgetGas).toBeNull();
      const receiptHtml = await done(receipt, next.cookie);
      expect(receiptHtml).toMatch(OWNER_LINK);
      expect(receiptHtml).toMatch(/The spending limits you set before paying are now in force/);
      expect(receiptHtml).toMatch(/Spending limits now in force/);
      expect((await app.api.ok('whoami', {}, apiKey)).agent.spendingLimits).toMatchObject({ dailyBudgetGas: 300, approvalAboveGas: 100 });
      const again = await done(receipt, next.cookie);
      expect(again).not.toMatch(/\/owner\//);
      expect(again).toMatch(/already shown/);
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
    const agentHtml = await done(`${app.baseUrl}/checkout/done?session_id=${buy.sessionId}`, agentNext.cookie);
    expect(agentHtml).not.toMatch(/\/owner\//);
    expect(agentHtml).toMatch(/this visit gets no owner link and changes nothing/);
    expect((await app.api.ok('whoami', {}, apiKey)).agent.spendingLimits.dailyBudgetGas).toBeNull();
    expect(await done(payerReturn(buy.sessionId), again.cookie)).toMatch(OWNER_LINK);
    expect((await app.api.ok('whoami', {}, apiKey)).agent.spendingLimits).toMatchObject({ dailyBudgetGas: 300, approvalAboveGas: 100 });
    // After the payment the agent's page has nothing to submit.
    const late = await postPageForm(`${app.baseUrl}/checkout/${buy.sessionId}/continue`, agent, { limitsForm: '1' });
    expect(late.status).toBe(409);
    expect((await app.api.ok('whoami', {}, apiKey)).agent.spendingLimits).toMatchObject({ dailyBudgetGas: 300, approvalAboveGas: 100 });
    expect(await balance(agentId)).toBe(500);
  });

  it('issue #39: the agent submits the page first with no limits and hands its human the Stripe page; the payer gets the owner link and the limits in force stay', async () => {
    const { apiKey, agentId, buy } = await buyer('Front Runner');
    // The human's limits from before (an earlier checkout).
    await app.call('escrow.setLimits', { agentId, limits: { perPurchaseMaxGas: 400, dailyBudgetGas: 500, approvalAboveGas: 50 } });
    const agent = await openPage(here(buy.checkoutUrl));
    const agentNext = await postPageForm(`${app.baseUrl}/checkout/${buy.sessionId}/continue`, agent, { limitsForm: '1' });
    expect(agentNext.status).toBe(303);
    // The human pays on the Stripe page the agent handed over and is sent back with the claim; the agent polls done meanwhile.
    stripe.markPaid(buy.sessionId);
    const agentDone = await done(`${app.baseUrl}/checkout/done?session_id=${buy.sessionId}`, agentNext.cookie);
    expect(agentDone).not.toMatch(/\/owner\//);
    expect(agentDone).toMatch(/this visit gets no owner link and changes nothing/);
    const humanDone = await done(payerReturn(buy.sessionId));
    expect(humanDone).toMatch(OWNER_LINK);
    expect(humanDone).toMatch(/spending limits are unchanged/);
    // The agent's staged "no limits" never applied; nor do they when it comes back later with its cookie.
    expect(await done(`${app.baseUrl}/checkout/done?session_id=${buy.sessionId}`, agentNext.cookie)).not.toMatch(/\/owner\//);
    expect((await app.api.ok('whoami', {}, apiKey)).agent.spendingLimits).toMatchObject({ perPurchaseMaxGas: 400, dailyBudgetGas: 500, approvalAboveGas: 50 });
    expect(await balance(agentId)).toBe(500);
  });

  it('issue #39: a wrong claim gets nothing; a claim that arrives before the payment is confirmed keeps working until it is used', async () => {
    const { agentId, buy } = await buyer('Early Return');
    const real = payerReturn(buy.sessionId);
    const forged = real.replace(/claim=[^&]+/, 'claim=' + 'A'.repeat(43));
    expect(await done(real)).toMatch(/reload it in a minute/);
    expect(await done(real)).not.toMatch(/\/owner\//);
    stripe.markPaid(buy.sessionId);
    expect(await done(forged)).not.toMatch(/\/owner\//);
    expect(await done(real.replace(/&claim=[^&]+/, ''))).not.toMatch(/\/owner\//);
    // The return page asks Stripe server-side (no webhook here), credits, and hands out the owner link once.
    expect(await done(real)).toMatch(OWNER_LINK);
    expect(await done(real)).not.toMatch(/\/owner\//);
    expect(await balance(agentId)).toBe(500);
    // A claim secret of one session is worth nothing on another.
    const other = await buyer('Other Session');
    stripe.markPaid(other.buy.sessionId);
    expect(await done(real.replace(buy.sessionId, other.buy.sessionId))).not.toMatch(/\/owner\//);
    expect(await done(payerReturn(other.buy.sessionId))).toMatch(OWNER_LINK);
  });

  it('issue #39: when escrow cannot make the owner link, the payer is told to reload, and the claim still works then', async () => {
    const { agentId, buy } = await buyer('Escrow Hiccup');
    stripe.markPaid(buy.sessionId);
    const escrow = app.broker.getLocalService('escrow') as any;
    await escrow.db.query('ALTER TABLE escrow.owner_links RENAME TO owner_links_gone');
    let first: string;
    try {
      first = await done(payerReturn(buy.sessionId));
    } finally {
      await escrow.db.query('ALTER TABLE escrow.owner_links_gone RENAME TO owner_links');
    }
    expect(first).not.toMatch(/\/owner\//);
    expect(first).toMatch(/could not be made right now: keep this page and reload it/);
    // The claim was rolled back with the failed link: the reload gets it, once.
    expect(await done(payerReturn(buy.sessionId))).toMatch(OWNER_LINK);
    expect(await done(payerReturn(buy.sessionId))).not.toMatch(/\/owner\//);
    expect(await balance(agentId)).toBe(500);
  });

  it('a retried buy_gas with the same idempotency key sends Stripe the same request (same claim secret) and opens one session', async () => {
    const { agent } = await app.api.register('Retrying Buyer');
    const meta = { agent: { id: agent.id, displayName: 'Retrying Buyer' }, idempotencyKey: 'retry-1' };
    const first = await app.call('payments.buyGas', { packId: 'starter' }, meta);
    const second = await app.call('payments.buyGas', { packId: 'starter' }, meta);
    expect(second.sessionId).toBe(first.sessionId);
    stripe.markPaid(first.sessionId);
    expect(await done(payerReturn(first.sessionId))).toMatch(OWNER_LINK);
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

describeWithPostgres('Stripe checkout owner claim on PostgreSQL (issue #39)', () => {
  let stripe: StripeStandIn;
  let app: TestApp;
  beforeAll(async () => {
    stripe = await startStripeStandIn();
    app = await startTestApp({ postgres: true, env: { STRIPE_SECRET_KEY: stripe.secretKey, STRIPE_WEBHOOK_SECRET: stripe.webhookSecret, STRIPE_API_BASE: stripe.url } });
  });
  afterAll(async () => {
    await app?.stop();
    await stripe?.stop();
  });

  it('the payer\'s return page opened many times at once gives exactly one owner link', async () => {
    const { apiKey, agent } = await app.api.register('Racing Claims');
    const buy = await app.api.ok('buy_gas', { packId: 'starter' }, apiKey);
    stripe.markPaid(buy.sessionId);
    const u = new URL(stripe.sessions.get(buy.sessionId)!.success_url!.replace('{CHECKOUT_SESSION_ID}', buy.sessionId));
    const pages = await Promise.all(Array.from({ length: 8 }, async () => (await fetch(`${app.baseUrl}${u.pathname}${u.search}`)).text()));
    expect(pages.filter((html) => /\/owner\/[A-Za-z0-9_-]{20,}/.test(html))).toHaveLength(1);
    expect((await app.call('ledger.balance', { agentId: agent.id })).gasBalance).toBe(500);
    await expectLedgerClean(app);
  });
});
