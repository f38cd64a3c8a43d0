/**
 * Issue #18's acceptance run in a real browser (Debian's Chromium): the human approves a checkout
 * while setting a 500-gas daily budget and "ask me above 200"; the agent buys 150 (goes through) and
 * 250 (awaiting_approval; the human approves it on the page, which only the browser holding the owner
 * cookie from the checkout receipt can); 120 then breaks the budget (403, nothing
 * held). The owner page shows 400 spent today. axe-core finds no serious violation on the new pages.
 */
import AxeBuilder from '@axe-core/playwright';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../../../test/kit';
import { expectLedgerClean } from '../../../test/kit/ledger';
import { describeWithChromium, launchChromium, DESKTOP } from '../../../test/kit/browser';
import { newAgent, newListing, wallet } from '../../escrow/test/helpers';

async function expectAccessible(page: Page, what: string): Promise<void> {
  const result = await new AxeBuilder({ page }).analyze();
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(bad.map((v) => `${what}: ${v.id} ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`)).toEqual([]);
}

describeWithChromium('spending limits in Chromium', () => {
  let app: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const path = (url: string) => new URL(url).pathname;

  beforeAll(async () => {
    [app, browser] = await Promise.all([startTestApp(), launchChromium()]);
    context = await browser.newContext({ viewport: DESKTOP, baseURL: app.baseUrl });
    page = await context.newPage();
  });
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await app?.stop();
  });

  it('checkout sets the limits; 150 goes through, 250 is approved in the browser, 120 breaks the daily budget', async () => {
    const buyer = await newAgent(app, 'Buyer');
    const ids: Record<number, string> = {};
    for (const price of [150, 250, 120]) ids[price] = (await newListing(app, await newAgent(app, 'Seller'), { priceGas: price })).id;

    const checkout = await app.api.ok('buy_gas', { packId: 'builder' }, buyer.apiKey);
    await page.goto(path(checkout.checkoutUrl));
    await expectAccessible(page, 'checkout with limits');
    await page.getByLabel('Budget per day (gas, UTC day)').fill('500');
    await page.getByLabel('Ask me to approve purchases above (gas)').fill('200');
    await page.getByRole('button', { name: /^Approve/ }).click();
    await page.waitForURL(/\/approve$/);
    expect(await page.locator('h1').innerText()).toBe('Payment approved');
    const ownerHref = await page.locator('a[data-owner-link]').getAttribute('href');
    expect(ownerHref).toMatch(/\/owner\//);

    expect((await app.api.ok('purchase_service', { listingId: ids[150] }, buyer.apiKey)).purchase.status).toBe('awaiting_delivery');
    const asked = (await app.api.ok('purchase_service', { listingId: ids[250] }, buyer.apiKey)).purchase;
    expect(asked.status).toBe('awaiting_approval');

    // The agent's own browser (no owner cookie) gets the explanation, not the buttons.
    const stranger = await browser.newContext({ viewport: DESKTOP, baseURL: app.baseUrl });
    const agentPage = await stranger.newPage();
    await agentPage.goto(path(asked.approvalUrl));
    expect(await agentPage.locator('main').innerText()).toMatch(/Open your owner link \(shown on your checkout receipt\) in this browser/);
    expect(await agentPage.getByRole('button', { name: 'Approve 250 gas' }).count()).toBe(0);
    await stranger.close();

    // The human's browser did the checkout, so it holds the owner cookie and sees the buttons.
    await page.goto(path(asked.approvalUrl));
    expect(await page.locator('main').innerText()).toMatch(/asks to spend 250 gas/);
    await expectAccessible(page, 'approval page');
    await page.getByRole('button', { name: 'Approve 250 gas' }).click();
    await page.waitForURL(/\/approve$/);
    expect(await page.locator('h1').innerText()).toBe('Purchase approved');
    expect((await app.api.ok('get_purchase', { purchaseId: asked.id }, buyer.apiKey)).purchase.status).toBe('awaiting_delivery');
    expect((await app.api.ok('whoami', {}, buyer.apiKey)).agent.spendingLimits).toMatchObject({ spentTodayGas: 400, dailyBudgetGas: 500 });

    const refused = await app.api.call('purchase_service', { listingId: ids[120] }, buyer.apiKey);
    expect(refused.status).toBe(403);
    expect(refused.body.error!.details).toMatchObject({ rule: 'daily_budget', remainingGas: 100 });
    expect(await wallet(app, buyer)).toMatchObject({ gasBalance: 1600, heldGas: 400 });

    await page.goto(path(ownerHref!));
    const owner = await page.locator('main').innerText();
    expect(owner).toMatch(/400 gas of 500 gas/);
    expect(owner).toMatch(/1,600 gas/);
    await expectAccessible(page, 'owner page');
    // The human raises the budget on the owner page; the 120 now goes through (it needs no approval).
    await page.getByLabel('Budget per day (gas, UTC day)').fill('600');
    await page.getByRole('button', { name: 'Save limits' }).click();
    await page.waitForURL(/saved=1/);
    expect((await app.api.ok('purchase_service', { listingId: ids[120] }, buyer.apiKey)).purchase.status).toBe('awaiting_delivery');
    await expectLedgerClean(app);
  });
});
