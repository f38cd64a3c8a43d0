/**
 * Issue #23, "the agent can take the owner link and erase its human's limits", replayed in Chromium
 * with two browsers: the human's and the agent's (the agent has the checkout URL too). Only the
 * browser that completes the payment gets the owner link and sets the limits; the other one, before
 * or after, gets neither and changes nothing.
 *
 * Stripe mode runs against the Stripe stand-in, whose hosted page is on another site (localhost vs
 * 127.0.0.1) so the return to /checkout/done is a cross-site navigation, as from checkout.stripe.com.
 *
 * Issue #39, "the agent takes its human's owner link" in Stripe mode: the agent opens and submits the
 * page first, then hands its human the Stripe page it was sent to; the owner link goes to the payer.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { eventually, freePort, startTestApp, type TestApp } from '../../../test/kit';
import { expectLedgerClean } from '../../../test/kit/ledger';
import { describeWithChromium, launchChromium, DESKTOP } from '../../../test/kit/browser';
import { startStripeStandIn, type StripeStandIn } from '../../../test/kit/stripe-standin';
import { newAgent, newListing } from '../../escrow/test/helpers';

const path = (url: string) => new URL(url).pathname;

async function fillLimits(page: Page, daily: string, above: string): Promise<void> {
  await page.getByLabel('Budget per day (gas, UTC day)').fill(daily);
  await page.getByLabel('Ask me to approve purchases above (gas)').fill(above);
}

describeWithChromium('owner link takeover (issue #23) in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  async function twoBrowsers(baseURL: string): Promise<{ human: Page; agent: Page; close: () => Promise<void> }> {
    const contexts: BrowserContext[] = [await browser.newContext({ viewport: DESKTOP, baseURL }), await browser.newContext({ viewport: DESKTOP, baseURL })];
    const [human, agent] = await Promise.all(contexts.map((c) => c.newPage()));
    return { human, agent, close: async () => void (await Promise.all(contexts.map((c) => c.close()))) };
  }

  describe('Stripe mode (stand-in)', () => {
    let stripe: StripeStandIn;
    let app: TestApp;
    beforeAll(async () => {
      stripe = await startStripeStandIn({ pageHost: 'localhost' });
      // Stripe returns the browser to PUBLIC_BASE_URL: it must be this very server.
      const port = await freePort();
      app = await startTestApp({
        env: { PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, STRIPE_SECRET_KEY: stripe.secretKey, STRIPE_WEBHOOK_SECRET: stripe.webhookSecret, STRIPE_API_BASE: stripe.url },
      });
      stripe.setWebhookUrl(`${app.baseUrl}/api/payments/stripe/webhook`);
    });
    afterAll(async () => {
      await app?.stop();
      await stripe?.stop();
    });

    it('the human sets limits and pays; the agent submitting the page after (and opening the receipt) gets no owner link and changes nothing', async () => {
      const buyer = await newAgent(app, 'Buyer');
      const listing = await newListing(app, await newAgent(app, 'Seller'), { priceGas: 250 });
      const checkout = await app.api.ok('buy_gas', { packId: 'builder' }, buyer.apiKey);
      const { human, agent, close } = await twoBrowsers(app.baseUrl);
      try {
        // The agent opens the page first (it has the URL), then the human submits the limits.
        await agent.goto(path(checkout.checkoutUrl));
        await human.goto(path(checkout.checkoutUrl));
        await fillLimits(human, '300', '100');
        await human.getByRole('button', { name: /^Continue to payment/ }).click();
        await human.waitForURL(/\/pay\//);

        // The agent submits the same page with no limits: refused, nothing staged for it.
        await agent.getByRole('button', { name: /^Continue to payment/ }).click();
        await agent.waitForLoadState();
        expect(agent.url()).not.toMatch(/\/pay\//);
        expect(await agent.locator('main').innerText()).toMatch(/another browser/i);

        // The human pays on Stripe's page and comes back to the receipt.
        await human.getByRole('button', { name: 'Pay' }).click();
        await human.waitForURL(/\/checkout\/done\?session_id=/);
        const receiptUrl = human.url();
        const ownerHref = await human.locator('a[data-owner-link]').getAttribute('href');
        expect(ownerHref).toMatch(/\/owner\/[A-Za-z0-9_-]{20,}/);

        // The agent opens the receipt too: no owner link for it.
        await agent.goto(receiptUrl);
        expect(await agent.locator('a[data-owner-link]').count()).toBe(0);
        expect(await agent.locator('main').innerText()).not.toMatch(/\/owner\//);

        await eventually(async () => (await app.api.ok('wallet', {}, buyer.apiKey)).gasBalance === 2000);
        expect((await app.api.ok('whoami', {}, buyer.apiKey)).agent.spendingLimits).toMatchObject({ dailyBudgetGas: 300, approvalAboveGas: 100 });
        const p = (await app.api.ok('purchase_service', { listingId: listing.id }, buyer.apiKey)).purchase;
        expect(p.status).toBe('awaiting_approval');

        // The human's browser holds the owner cookie: it can see and revoke.
        await human.goto(path(ownerHref!));
        expect(await human.locator('main').innerText()).toMatch(/300 gas/);
        await expectLedgerClean(app);
      } finally {
        await close();
      }
    });

    it('the agent submits first: the human is told another browser is paying; the agent never gets the human limits nor can it erase them later', async () => {
      const buyer = await newAgent(app, 'Buyer Two');
      const checkout = await app.api.ok('buy_gas', { packId: 'builder' }, buyer.apiKey);
      const { human, agent, close } = await twoBrowsers(app.baseUrl);
      try {
        await agent.goto(path(checkout.checkoutUrl));
        await agent.getByRole('button', { name: /^Continue to payment/ }).click();
        await agent.waitForURL(/\/pay\//);
        await human.goto(path(checkout.checkoutUrl));
        await fillLimits(human, '300', '100');
        await human.getByRole('button', { name: /^Continue to payment/ }).click();
        await human.waitForLoadState();
        expect(human.url()).not.toMatch(/\/pay\//);
        const told = await human.locator('main').innerText();
        expect(told).toMatch(/another browser/i);
        expect(told).toMatch(/do not pay/i);
        // The agent resubmitting with other limits is its own row; it never replaced the human's.
        expect((await app.api.ok('whoami', {}, buyer.apiKey)).agent.spendingLimits.dailyBudgetGas).toBeNull();
      } finally {
        await close();
      }
    });
    it('issue #39: the agent submits the page first and hands its human the Stripe page; the payer gets the owner link, the agent none, and the limits in force stay', async () => {
      const buyer = await newAgent(app, 'Buyer Three');
      const listing = await newListing(app, await newAgent(app, 'Seller Three'), { priceGas: 300 });
      // The human's limits from an earlier checkout.
      await app.call('escrow.setLimits', { agentId: buyer.id, limits: { perPurchaseMaxGas: 400, dailyBudgetGas: 500, approvalAboveGas: 50 } });
      const checkout = await app.api.ok('buy_gas', { packId: 'builder' }, buyer.apiKey);
      const { human, agent, close } = await twoBrowsers(app.baseUrl);
      try {
        // Browser A, the agent: opens the checkout page first, empties the limit fields, continues to Stripe.
        await agent.goto(path(checkout.checkoutUrl));
        for (const label of ['Maximum per purchase (gas)', 'Budget per day (gas, UTC day)', 'Ask me to approve purchases above (gas)']) await agent.getByLabel(label).fill('');
        await agent.getByRole('button', { name: /^Continue to payment/ }).click();
        await agent.waitForURL(/\/pay\//);
        const stripePage = agent.url();
        expect(stripePage).not.toMatch(/claim/);
        expect(await agent.content()).not.toMatch(/claim=/);

        // Browser B, the human: opens the Stripe page the agent handed over, pays, and is sent back.
        await human.goto(stripePage);
        await human.getByRole('button', { name: 'Pay' }).click();
        await human.waitForURL(/\/checkout\/done\?session_id=/);
        const ownerHref = await human.locator('a[data-owner-link]').getAttribute('href');
        expect(ownerHref).toMatch(/\/owner\/[A-Za-z0-9_-]{20,}/);
        const receipt = await human.locator('main').innerText();
        expect(receipt).toMatch(/spending limits are unchanged/);
        expect(receipt).toMatch(/Spending limits now in force/);
        expect(receipt).toMatch(/500 gas/);

        // A comes back to the return page (it knows the session id, and holds the checkout-browser cookie): nothing.
        await agent.goto(`/checkout/done?session_id=${encodeURIComponent(checkout.sessionId)}`);
        expect(await agent.locator('a[data-owner-link]').count()).toBe(0);
        expect(await agent.locator('main').innerText()).toMatch(/this visit gets no owner link and changes nothing/);
        // Nor can it submit the page again now.
        await agent.goto(path(checkout.checkoutUrl));
        expect(await agent.getByRole('button', { name: /^Continue to payment/ }).count()).toBe(0);

        // The agent got its gas; the human's limits still hold: the 300-gas purchase waits for the human.
        await eventually(async () => (await app.api.ok('wallet', {}, buyer.apiKey)).gasBalance === 2000);
        expect((await app.api.ok('whoami', {}, buyer.apiKey)).agent.spendingLimits).toMatchObject({ perPurchaseMaxGas: 400, dailyBudgetGas: 500, approvalAboveGas: 50 });
        const p = (await app.api.ok('purchase_service', { listingId: listing.id }, buyer.apiKey)).purchase;
        expect(p.status).toBe('awaiting_approval');
        // The agent's browser holds no owner link, so it cannot approve its own purchase.
        await agent.goto(path(p.approvalUrl));
        expect(await agent.getByRole('button', { name: /^Approve/ }).count()).toBe(0);
        expect(await agent.locator('main').innerText()).toMatch(/Only the owner of this agent can approve/);

        // The owner link works for B: the only live link, and its limit form saves.
        await human.goto(path(ownerHref!));
        const owner = await human.locator('main').innerText();
        expect(owner).toMatch(/Only this link opens the owner page of this agent/);
        await human.getByLabel('Budget per day (gas, UTC day)').fill('600');
        await human.getByRole('button', { name: 'Save limits' }).click();
        await human.waitForURL(/saved=1/);
        expect((await app.api.ok('whoami', {}, buyer.apiKey)).agent.spendingLimits).toMatchObject({ dailyBudgetGas: 600, approvalAboveGas: 50 });
        // B approves the purchase from its own browser (the owner cookie came with the receipt).
        await human.goto(path(p.approvalUrl));
        await human.getByRole('button', { name: /^Approve/ }).click();
        expect(await human.locator('h1').innerText()).toBe('Purchase approved');
        // Still the only owner link: the agent could neither take nor replace it.
        await human.goto(path(ownerHref!));
        expect(await human.locator('main').innerText()).toMatch(/Only this link opens the owner page of this agent/);
        await expectLedgerClean(app);
      } finally {
        await close();
      }
    });
  });

  describe('sandbox mode', () => {
    let app: TestApp;
    beforeAll(async () => {
      app = await startTestApp();
    });
    afterAll(async () => {
      await app?.stop();
    });

    it('the human approves with limits; the agent, who opened the page before, submits after: 409, no owner link, limits unchanged', async () => {
      const buyer = await newAgent(app, 'Buyer');
      const listing = await newListing(app, await newAgent(app, 'Seller'), { priceGas: 250 });
      const checkout = await app.api.ok('buy_gas', { packId: 'builder' }, buyer.apiKey);
      const { human, agent, close } = await twoBrowsers(app.baseUrl);
      try {
        await agent.goto(path(checkout.checkoutUrl));
        await human.goto(path(checkout.checkoutUrl));
        await fillLimits(human, '300', '100');
        await human.getByRole('button', { name: /^Approve/ }).click();
        await human.waitForURL(/\/approve$/);
        expect(await human.locator('a[data-owner-link]').getAttribute('href')).toMatch(/\/owner\//);

        await agent.getByRole('button', { name: /^Approve/ }).click();
        await agent.waitForURL(/\/approve$/);
        expect(await agent.locator('h1').innerText()).toBe('Nothing to approve');
        expect(await agent.locator('a[data-owner-link]').count()).toBe(0);
        await agent.goto(`/checkout/done?session_id=${encodeURIComponent(checkout.sessionId)}`);
        expect(await agent.locator('a[data-owner-link]').count()).toBe(0);

        expect((await app.api.ok('whoami', {}, buyer.apiKey)).agent.spendingLimits).toMatchObject({ dailyBudgetGas: 300, approvalAboveGas: 100 });
        expect((await app.api.ok('purchase_service', { listingId: listing.id }, buyer.apiKey)).purchase.status).toBe('awaiting_approval');
        await expectLedgerClean(app);
      } finally {
        await close();
      }
    });
  });
});
