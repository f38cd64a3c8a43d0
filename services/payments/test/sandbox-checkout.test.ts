/** Buying gas without Stripe keys: the sandbox checkout page, submitted as a browser would (form POST). */
import { eventually, startTestApp, type TestApp } from '../../../test/kit';
import { ConfigError, loadConfig } from '../../../packages/config';
import { expectLedgerClean } from '../../../test/kit/ledger';
import { openSandboxCheckout, submitSandboxForm, type SandboxForm } from '../../../test/kit/checkout';

/** checkoutUrl names PUBLIC_BASE_URL; the test server listens on a random port. */
const onApp = (app: TestApp, url: string) => `${app.baseUrl}${new URL(url).pathname}`;

/** Posts a checkout form as the browser that opened `page` would (its CSRF cookie and token). */
async function form(app: TestApp, action: string, page: SandboxForm | null) {
  const res = await fetch(`${app.baseUrl}${action}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(page ? { cookie: page.cookie } : {}) },
    body: page ? `csrf=${encodeURIComponent(page.csrf)}` : '',
    redirect: 'manual',
  });
  return { status: res.status, html: await res.text(), type: res.headers.get('content-type') };
}

function actionOf(html: string, decision: 'approve' | 'decline'): string {
  const m = new RegExp(`<form method="post" action="([^"]+/${decision})"`).exec(html);
  if (!m) throw new Error(`no ${decision} form in page:\n${html}`);
  return m[1];
}

describe('sandbox checkout', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.stop();
  });

  afterEach(async () => {
    await expectLedgerClean(app);
  });

  it('approve credits the pack once; a second approval and a declined session credit nothing', async () => {
    const { apiKey } = await app.api.register('Sandbox Buyer <&>');
    const buy = await app.api.ok('buy_gas', { packId: 'starter' }, apiKey);
    expect(buy).toEqual({
      checkoutUrl: expect.stringMatching(/\/checkout\/sandbox\/cko_[0-9A-Za-z]+$/),
      sessionId: expect.stringMatching(/^cko_/),
      packId: 'starter',
      gas: 500,
      usd: 5,
      expiresAt: expect.any(String),
    });
    expect(new Date(buy.expiresAt).getTime()).toBeGreaterThan(Date.now());
    const path = new URL(buy.checkoutUrl).pathname;

    const page = await app.api.get(path);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self'/);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.text).toContain('starter');
    expect(page.text).toContain('$5.00 USD');
    expect(page.text).toContain('500 gas');
    expect(page.text).toContain('Sandbox Buyer &lt;&amp;'); // escaped by the renderer (">" needs no escaping in text)
    expect(page.text).not.toContain('Sandbox Buyer <&');
    expect(page.text).toContain('Agent Market'); // whom the person is paying
    expect(page.text).toContain('No card details reach the agent');
    expect(page.text).toMatch(/expires in \d+ hours/);
    // No inline script: the only script is the site's own, and the forms work without it.
    expect(page.text).not.toMatch(/<script>/i);
    expect(page.text).toMatch(/<button[^>]*>Approve \$5\.00<\/button>/);
    expect(page.text).toMatch(/<button[^>]*>Decline<\/button>/);

    // A form posted without this browser's token (another site, a bare curl) does nothing.
    const forged = await form(app, actionOf(page.text, 'approve'), null);
    expect(forged.status).toBe(403);
    expect((await app.api.ok('wallet', {}, apiKey)).gasBalance).toBe(0);
    const opened = await openSandboxCheckout(onApp(app, buy.checkoutUrl));
    const wrongSession = await form(app, '/checkout/sandbox/cko_other/approve', opened);
    expect(wrongSession.status).toBe(403);

    const approved = await form(app, actionOf(page.text, 'approve'), opened);
    expect(approved.status).toBe(200);
    expect(approved.type).toMatch(/text\/html/);
    expect(approved.html).toContain('500 gas were added');

    const wallet = await eventually(async () => {
      const w = await app.api.ok('wallet', {}, apiKey);
      return w.gasBalance === 500 ? w : null;
    });
    expect(wallet).toMatchObject({ gasBalance: 500, heldGas: 0, pendingEarningsGas: 0, withdrawableGas: 0, lifetimeEarnedGas: 0, nextCursor: null, cashouts: [] });
    expect(wallet.entries).toEqual([
      { id: expect.stringMatching(/^pst_/), type: 'gas_purchase', amountGas: 500, balanceAfterGas: 500, sessionId: buy.sessionId, createdAt: expect.any(String) },
    ]);
    expect((await app.api.ok('whoami', {}, apiKey)).agent.gasBalance).toBe(500);

    // The page now says paid, and approving again (a double click, a replayed form) credits nothing.
    const after = await app.api.get(path);
    expect(after.text).toContain('This checkout is paid');
    expect(after.text).not.toContain('<form');
    const again = await form(app, actionOf(page.text, 'approve'), opened);
    expect(again.status).toBe(409);
    expect((await app.api.ok('wallet', {}, apiKey)).gasBalance).toBe(500);

    // A second session, declined: nothing; approving it afterwards: nothing.
    const second = await app.api.ok('buy_credits', { packId: 'builder' }, apiKey);
    expect(second).toMatchObject({ packId: 'builder', gas: 2000, usd: 20 });
    const page2 = await openSandboxCheckout(onApp(app, second.checkoutUrl));
    expect(page2.html).toContain('20.00 USD');
    const declined = await submitSandboxForm(page2, 'decline');
    expect(declined.status).toBe(200);
    expect(declined.html).toContain('Nothing was charged');
    const late = await submitSandboxForm(page2, 'approve');
    expect(late.status).toBe(409);
    expect(late.html).toContain('declined');
    const w2 = await app.api.ok('wallet', {}, apiKey);
    expect(w2.gasBalance).toBe(500);
    expect(w2.entries).toHaveLength(1);
  });

  it('concurrent approvals of one session credit once', async () => {
    const { apiKey } = await app.api.register('Double Clicker');
    const buy = await app.api.ok('buy_gas', { packId: 'starter' }, apiKey);
    const page = await openSandboxCheckout(onApp(app, buy.checkoutUrl));
    const results = await Promise.all(Array.from({ length: 8 }, () => submitSandboxForm(page, 'approve')));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(7);
    expect((await app.api.ok('wallet', {}, apiKey)).gasBalance).toBe(500);
  });

  it('defaults to the builder pack', async () => {
    const { apiKey } = await app.api.register('Default Pack');
    expect(await app.api.ok('buy_gas', {}, apiKey)).toMatchObject({ packId: 'builder', gas: 2000, usd: 20 });
  });

  it('an unknown packId is invalid_arguments listing the packs, and creates nothing', async () => {
    const { apiKey } = await app.api.register('Bad Pack');
    const r = await app.api.call('buy_gas', { packId: 'mega' }, apiKey);
    expect(r.status).toBe(400);
    expect(r.body.ok).toBe(false);
    expect(r.body.error!.code).toBe('invalid_arguments');
    const text = JSON.stringify(r.body.error);
    for (const p of ['starter', 'builder', 'fleet']) expect(text).toContain(p);
    expect(r.body.error!.hint).toBeTruthy();
    // Called directly (bypassing the gateway's validation) it is the same error.
    await expect(app.call('payments.buyGas', { packId: 'mega' }, { agent: { id: 'agt_x', displayName: 'x', provider: 'other' } })).rejects.toMatchObject({
      type: expect.stringMatching(/invalid_arguments|VALIDATION_ERROR/),
    });
  });

  it('a buyer who lost its checkoutUrl gets it again: get_checkout, or buy_gas with the same Idempotency-Key', async () => {
    const { apiKey } = await app.api.register('Forgetful Buyer');
    const first = await app.api.ok('buy_gas', { packId: 'starter' }, apiKey, { 'idempotency-key': 'lost-url-1' });
    const second = await app.api.ok('buy_gas', { packId: 'builder' }, apiKey);
    const again = await app.api.call('buy_gas', { packId: 'starter' }, apiKey, { 'idempotency-key': 'lost-url-1' });
    expect(again.body.result).toEqual(first);
    expect(again.headers.get('idempotent-replayed')).toBe('true');

    const open = await app.api.ok('get_checkout', {}, apiKey);
    expect(open.checkouts.map((c: any) => c.sessionId).sort()).toEqual([first.sessionId, second.sessionId].sort());
    expect(open.checkouts.find((c: any) => c.sessionId === first.sessionId)).toMatchObject({
      checkoutUrl: first.checkoutUrl,
      packId: 'starter',
      gas: 500,
      usd: 5,
      status: 'open',
      expiresAt: first.expiresAt,
    });

    // Approved: no longer open, still readable by its sessionId.
    const page = await openSandboxCheckout(onApp(app, first.checkoutUrl));
    expect((await submitSandboxForm(page, 'approve')).status).toBeLessThan(400);
    expect((await app.api.ok('get_checkout', {}, apiKey)).checkouts.map((c: any) => c.sessionId)).toEqual([second.sessionId]);
    expect((await app.api.ok('get_checkout', { sessionId: first.sessionId }, apiKey)).checkouts[0]).toMatchObject({ status: 'completed' });

    // Someone else's session is not found; expired ones are not listed.
    const other = await app.api.register('Nosy Agent');
    const nosy = await app.api.call('get_checkout', { sessionId: second.sessionId }, other.apiKey);
    expect(nosy.status).toBe(404);
    expect(nosy.body.error!.hint).toMatch(/get_checkout/);
    app.clock.advance(25 * 3_600_000);
    try {
      expect((await app.api.ok('get_checkout', {}, apiKey)).checkouts).toEqual([]);
    } finally {
      app.clock.advance(-25 * 3_600_000);
    }
    expect((await app.api.ok('wallet', {}, apiKey)).gasBalance).toBe(500);
  });

  it('an expired session cannot be approved', async () => {
    const { apiKey } = await app.api.register('Slow Human');
    const buy = await app.api.ok('buy_gas', { packId: 'starter' }, apiKey);
    const opened = await openSandboxCheckout(onApp(app, buy.checkoutUrl)); // the page was open; the click came too late
    app.clock.advance(25 * 3_600_000);
    try {
      const r = await submitSandboxForm(opened, 'approve');
      expect(r.status).toBe(409);
      expect(r.html).toContain('expired');
    } finally {
      app.clock.advance(-25 * 3_600_000);
    }
    expect((await app.api.ok('wallet', {}, apiKey)).gasBalance).toBe(0);
  });

  it('an unknown session is a 404 page; the webhook without Stripe configured is a 400 that credits nothing', async () => {
    const page = await app.api.get('/checkout/sandbox/cko_doesnotexist');
    expect(page.status).toBe(404);
    expect(page.text).toMatch(/<html/);
    const someone = await openSandboxCheckout(`${app.baseUrl}/checkout/sandbox/cko_doesnotexist`);
    expect(someone.csrf).toBe(''); // a 404 page has no form
    const approve = await form(app, '/checkout/sandbox/cko_doesnotexist/approve', null);
    expect(approve.status).toBe(403);
    const res = await fetch(`${app.baseUrl}/api/payments/stripe/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=deadbeef' },
      body: JSON.stringify({ id: 'evt_1', type: 'checkout.session.completed', data: { object: {} } }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.code).toBe('invalid_arguments');
  });

  it('the sandbox refuses NODE_ENV=production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(ConfigError);
    expect(() => loadConfig({ NODE_ENV: 'production', STRIPE_SECRET_KEY: 'sk_live_x', STRIPE_WEBHOOK_SECRET: 'whsec_x' })).not.toThrow();
  });
});
