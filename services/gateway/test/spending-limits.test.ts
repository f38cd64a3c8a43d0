/**
 * Spending limits over HTTP, as a human and an agent meet them (issue #18's acceptance run): the
 * human approves a checkout setting a 500-gas daily budget and "ask me above 200"; the agent buys
 * 150 (goes through), 250 (awaiting_approval; the human approves it on the page), then 120 (403
 * daily_budget, nothing held). Then the owner page, the other rules, decline and expiry.
 */
import { createHmac } from 'node:crypto';
import { startTestApp, type TestApp } from '../../../test/kit';
import { openPage, openSandboxCheckout, postPageForm, submitSandboxForm } from '../../../test/kit/checkout';
import { expectLedgerClean } from '../../../test/kit/ledger';
import { newAgent, newListing, wallet, type TestAgent } from '../../escrow/test/helpers';

describe('spending limits set by a human, enforced on purchase_service', () => {
  let app: TestApp;
  let buyer: TestAgent;
  let ownerUrl: string;
  /** The human's browser cookies: it did the checkout, so it holds the owner cookie; the agent has none. */
  let human: string;
  const listings: Record<number, string> = {};
  const local = (url: string) => new URL(new URL(url).pathname, app.baseUrl).toString();
  /**
   * The agent at its worst: a full browser that reads its own CSRF cookie and computes the approval
   * form's token itself (the page shows it no form), so only the owner check stands in its way.
   */
  const agentBrowser = (page: { cookie: string }, approvalUrl: string) => {
    const secret = /market_csrf=([^;]+)/.exec(page.cookie)![1];
    const csrf = createHmac('sha256', secret).update(`csrf:approval:${new URL(approvalUrl).pathname.split('/').pop()}`).digest('base64url');
    return { cookie: page.cookie, csrf };
  };

  beforeAll(async () => {
    app = await startTestApp();
    // The tests move the clock two days on and count what was spent this week: start on a Tuesday at noon UTC, so
    // no Monday (a new budget week) falls in between whatever day the suite runs.
    const now = app.clock.now();
    const tuesdayNoon = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + ((2 - now.getUTCDay() + 7) % 7), 12);
    app.clock.advance(tuesdayNoon > now.getTime() ? tuesdayNoon - now.getTime() : tuesdayNoon + 7 * 86_400_000 - now.getTime());
    buyer = await newAgent(app, 'Buyer');
    for (const price of [150, 250, 120]) {
      const seller = await newAgent(app, 'Seller');
      listings[price] = (await newListing(app, seller, { priceGas: price })).id;
    }
  });
  afterAll(async () => {
    await app?.stop();
  });
  afterEach(async () => {
    await expectLedgerClean(app);
  });

  test('acceptance: 500/day and ask above 200 set on the checkout; 150 ok, 250 approved in the page, 120 refused', async () => {
    const checkout = await app.api.ok('buy_gas', { packId: 'builder' }, buyer.apiKey);
    const form = await openSandboxCheckout(local(checkout.checkoutUrl));
    expect(form.html).toContain('name="dailyBudgetGas"');
    const approved = await submitSandboxForm(form, 'approve', { limitsForm: '1', dailyBudgetGas: '500', approvalAboveGas: '200' });
    expect(approved.status).toBe(200);
    expect(approved.html).toContain('Your spending limits are saved.');
    const token = /\/owner\/([A-Za-z0-9_-]+)/.exec(approved.html)?.[1];
    ownerUrl = `${app.baseUrl}/owner/${token}`;
    human = approved.cookie;
    expect(human).toMatch(new RegExp(`market_owner_${buyer.id}=`));
    expect(ownerUrl).toMatch(/\/owner\/[A-Za-z0-9_-]{20,}$/);

    const me = await app.api.ok('whoami', {}, buyer.apiKey);
    expect(me.agent.spendingLimits).toMatchObject({ dailyBudgetGas: 500, approvalAboveGas: 200, perPurchaseMaxGas: null, weeklyBudgetGas: null, allowedCategories: null, spentTodayGas: 0, spentThisWeekGas: 0 });

    const first = await app.api.ok('purchase_service', { listingId: listings[150] }, buyer.apiKey);
    expect(first.purchase).toMatchObject({ status: 'awaiting_delivery', approvalUrl: null });

    const second = await app.api.ok('purchase_service', { listingId: listings[250] }, buyer.apiKey);
    expect(second.purchase.status).toBe('awaiting_approval');
    expect(second.purchase.approvalUrl).toMatch(/\/approve\/[A-Za-z0-9_-]{20,}$/);
    expect(second.purchase.approvalExpiresAt).toBeTruthy();
    // Held, counted, and not shown to the seller yet.
    expect(await wallet(app, buyer)).toMatchObject({ gasBalance: 2000 - 400, heldGas: 400 });
    expect((await app.api.ok('wallet', {}, buyer.apiKey)).spendingLimits).toMatchObject({ spentTodayGas: 400, remainingTodayGas: 100 });
    const sellerId = second.purchase.sellerId;
    expect(sellerId).toBeTruthy();

    // A form without the page's token changes nothing.
    const forged = await postPageForm(`${local(second.purchase.approvalUrl)}/approve`, { cookie: '', csrf: 'x' });
    expect(forged.status).toBe(403);

    // The agent itself (no owner cookie) sees no buttons, and its POST is refused: nothing changes.
    const agentView = await openPage(local(second.purchase.approvalUrl));
    expect(agentView.status).toBe(200);
    expect(agentView.html).toMatch(/Open your owner link \(shown on your checkout receipt\) in this browser/);
    expect(agentView.html).not.toMatch(/<form[^>]*\/approve"/);
    const selfApproved = await postPageForm(`${local(second.purchase.approvalUrl)}/approve`, agentBrowser(agentView, second.purchase.approvalUrl));
    expect(selfApproved.status).toBe(403);
    expect(selfApproved.html).toMatch(/Open your owner link/);
    expect((await app.api.ok('get_purchase', { purchaseId: second.purchase.id }, buyer.apiKey)).purchase.status).toBe('awaiting_approval');
    expect(await wallet(app, buyer)).toMatchObject({ gasBalance: 1600, heldGas: 400 });

    const page = await openPage(local(second.purchase.approvalUrl), human);
    expect(page.status).toBe(200);
    expect(page.html).toContain('Approve 250 gas');
    const yes = await postPageForm(`${local(second.purchase.approvalUrl)}/approve`, page);
    expect(yes.status).toBe(200);
    const after = await app.api.ok('get_purchase', { purchaseId: second.purchase.id }, buyer.apiKey);
    expect(after.purchase).toMatchObject({ status: 'awaiting_delivery', approvalUrl: null });
    expect(after.purchase.deliverBy).toBeTruthy();
    // Approving twice is refused (the page says what happened).
    expect((await postPageForm(`${local(second.purchase.approvalUrl)}/approve`, page)).status).toBe(409);

    const third = await app.api.call('purchase_service', { listingId: listings[120] }, buyer.apiKey);
    expect(third.status).toBe(403);
    expect(third.body.error!.code).toBe('forbidden');
    expect(third.body.error!.details).toMatchObject({ rule: 'daily_budget', remainingGas: 100, limitGas: 500, spentGas: 400, priceGas: 120 });
    expect(third.body.error!.hint).toMatch(/human/);
    expect(await wallet(app, buyer)).toMatchObject({ gasBalance: 1600, heldGas: 400 });
    const orders = await app.api.ok('list_orders', { role: 'buyer' }, buyer.apiKey);
    expect(orders.purchases).toHaveLength(2);
  });

  test('approving a checkout with every limit field left empty says no limits are set, and where to set them', async () => {
    const other = await newAgent(app, 'Unlimited buyer');
    const checkout = await app.api.ok('buy_gas', { packId: 'starter' }, other.apiKey);
    const form = await openSandboxCheckout(local(checkout.checkoutUrl));
    const approved = await submitSandboxForm(form, 'approve', { limitsForm: '1', perPurchaseMaxGas: '', dailyBudgetGas: '', weeklyBudgetGas: '', approvalAboveGas: '' });
    expect(approved.status).toBe(200);
    expect(approved.html).not.toContain('limits are saved');
    expect(approved.html).toContain('No spending limits are set: the agent may spend its whole balance.');
    expect(approved.html).toMatch(/set them at any time on your private owner page/);
    expect(approved.html).toMatch(/\/owner\/[A-Za-z0-9_-]{20,}/);
    expect((await app.api.ok('whoami', {}, other.apiKey)).agent.spendingLimits).toMatchObject({ dailyBudgetGas: null, perPurchaseMaxGas: null, approvalAboveGas: null });
  });

  test('the seller sees an approval-awaiting purchase only once it is approved', async () => {
    const seller = await newAgent(app, 'Seller');
    const listingId = (await newListing(app, seller, { priceGas: 210 })).id;
    // The owner page lifts the daily budget so this purchase only needs approval.
    const owner = await openPage(ownerUrl, human);
    await postPageForm(`${ownerUrl}/limits`, owner, { limitsForm: '1', approvalAboveGas: '200' });
    const { purchase } = await app.api.ok('purchase_service', { listingId }, buyer.apiKey);
    expect(purchase.status).toBe('awaiting_approval');
    expect((await app.api.call('get_purchase', { purchaseId: purchase.id }, seller.apiKey)).status).toBe(404);
    expect((await app.api.ok('list_orders', { role: 'seller' }, seller.apiKey)).purchases).toHaveLength(0);
    const page = await openPage(local(purchase.approvalUrl), human);
    expect((await postPageForm(`${local(purchase.approvalUrl)}/approve`, page)).status).toBe(200);
    const seen = await app.api.ok('get_purchase', { purchaseId: purchase.id }, seller.apiKey);
    expect(seen.purchase).toMatchObject({ status: 'awaiting_delivery', approvalUrl: null, role: 'seller' });
    await app.api.ok('request_refund', { purchaseId: purchase.id }, buyer.apiKey);
  });

  test('issue #23: an approval past its expiry is refused as expired at decision time, before any sweeper runs', async () => {
    const seller = await newAgent(app, 'Seller');
    const listingId = (await newListing(app, seller, { priceGas: 220 })).id;
    const owner = await openPage(ownerUrl, human);
    await postPageForm(`${ownerUrl}/limits`, owner, { limitsForm: '1', approvalAboveGas: '200' });
    const before = await wallet(app, buyer);
    const { purchase } = await app.api.ok('purchase_service', { listingId }, buyer.apiKey);
    expect(purchase.status).toBe('awaiting_approval');
    const page = await openPage(local(purchase.approvalUrl), human);
    app.clock.advance(Date.parse(purchase.approvalExpiresAt) - app.clock.now().getTime() + 1000); // no sweeper in tests
    const late = await postPageForm(`${local(purchase.approvalUrl)}/approve`, page);
    expect(late.status).toBe(409);
    expect(late.html).toMatch(/expired/);
    const after = (await app.api.ok('get_purchase', { purchaseId: purchase.id }, buyer.apiKey)).purchase;
    expect(after.status).toBe('failed');
    expect(await wallet(app, buyer)).toMatchObject({ gasBalance: before.gasBalance, heldGas: before.heldGas });
    expect((await app.api.call('get_purchase', { purchaseId: purchase.id }, seller.apiKey)).status).toBe(404);
  });

  test('the owner page shows balance, spending and purchases, and its form sets every rule', async () => {
    const owner = await openPage(ownerUrl, human);
    expect(owner.status).toBe(200);
    expect(owner.html).toMatch(/Spent today/);
    expect(owner.html).toContain('Write Jest unit tests');

    const saved = await postPageForm(`${ownerUrl}/limits`, owner, { limitsForm: '1', perPurchaseMaxGas: '100' });
    expect(saved.status).toBe(303);
    const perPurchase = await app.api.call('purchase_service', { listingId: listings[120] }, buyer.apiKey);
    expect(perPurchase.status).toBe(403);
    expect(perPurchase.body.error!.details).toMatchObject({ rule: 'per_purchase_max', remainingGas: 100 });

    await postPageForm(`${ownerUrl}/limits`, owner, { limitsForm: '1', allowedCategories: ['research', 'ops'] });
    const category = await app.api.call('purchase_service', { listingId: listings[120] }, buyer.apiKey);
    expect(category.status).toBe(403);
    expect(category.body.error!.details).toMatchObject({ rule: 'category_not_allowed', category: 'codegen', allowedCategories: ['research', 'ops'] });

    await postPageForm(`${ownerUrl}/limits`, owner, { limitsForm: '1', weeklyBudgetGas: '300' });
    const weekly = await app.api.call('purchase_service', { listingId: listings[120] }, buyer.apiKey);
    expect(weekly.status).toBe(403);
    expect(weekly.body.error!.details.rule).toBe('weekly_budget');

    // No tool can change limits: no catalogued tool is about limits, and none takes a limit argument.
    const tools: Array<{ name: string; inputSchema: { properties: Record<string, unknown> } }> = (await app.api.get('/api/agent')).body.tools;
    expect(tools.map((t) => t.name).filter((n) => /limit|budget|approv/i.test(n))).toEqual([]);
    expect(tools.flatMap((t) => Object.keys(t.inputSchema.properties)).filter((k) => /budget|approval|perPurchase|allowedCategor/i.test(k))).toEqual([]);

    // A form without its token is refused.
    expect((await postPageForm(`${ownerUrl}/limits`, { cookie: '', csrf: 'nope' }, { limitsForm: '1' })).status).toBe(403);
    await postPageForm(`${ownerUrl}/limits`, owner, { limitsForm: '1', approvalAboveGas: '100' });
  });

  test('decline and 24 h without an answer fail the purchase and void the hold; refunded/failed do not count', async () => {
    const before = await wallet(app, buyer);
    const spentBefore = (await app.api.ok('wallet', {}, buyer.apiKey)).spendingLimits.spentTodayGas;
    const { purchase } = await app.api.ok('purchase_service', { listingId: listings[120] }, buyer.apiKey);
    expect(purchase.status).toBe('awaiting_approval');
    expect((await app.api.ok('wallet', {}, buyer.apiKey)).spendingLimits.spentTodayGas).toBe(spentBefore + 120);
    const page = await openPage(local(purchase.approvalUrl), human);
    const no = await postPageForm(`${local(purchase.approvalUrl)}/decline`, page);
    expect(no.status).toBe(200);
    const declined = await app.api.ok('get_purchase', { purchaseId: purchase.id }, buyer.apiKey);
    expect(declined.purchase).toMatchObject({ status: 'failed', failureReason: 'declined' });
    expect(await wallet(app, buyer)).toMatchObject({ gasBalance: before.gasBalance, heldGas: before.heldGas });
    expect((await app.api.ok('wallet', {}, buyer.apiKey)).spendingLimits.spentTodayGas).toBe(spentBefore);

    const late = (await app.api.ok('purchase_service', { listingId: listings[120] }, buyer.apiKey)).purchase;
    expect(late.status).toBe('awaiting_approval');
    app.clock.advance(24 * 3_600_000 + 60_000);
    const swept = await app.call('escrow.sweep');
    expect(swept.approvalsExpired).toBe(1);
    const expired = await app.api.ok('get_purchase', { purchaseId: late.id }, buyer.apiKey);
    expect(expired.purchase).toMatchObject({ status: 'failed', failureReason: 'approval_expired' });
    expect(await wallet(app, buyer)).toMatchObject({ gasBalance: before.gasBalance, heldGas: before.heldGas });
  });

  test('the owner page lists purchases awaiting approval and decides them; opening it gives another browser the owner cookie', async () => {
    const { purchase } = await app.api.ok('purchase_service', { listingId: listings[120] }, buyer.apiKey);
    expect(purchase.status).toBe('awaiting_approval');
    const approvalToken = new URL(purchase.approvalUrl).pathname.split('/').pop()!;
    // A fresh browser (say the human's phone) opens the owner link: it now holds the cookie too.
    const phone = await openPage(ownerUrl);
    expect(phone.cookie).toMatch(new RegExp(`market_owner_${buyer.id}=`));
    expect(phone.html).toContain('Awaiting your approval');
    const form = new RegExp(`action="/approve/${approvalToken}/approve"><input type="hidden" name="csrf" value="([^"]+)"`).exec(phone.html);
    expect(form).toBeTruthy();
    // Every form of the page works in that fresh browser (one CSRF secret per page, however many forms).
    const limitsCsrf = /action="\/owner\/[^"]+\/limits"[^>]*><input type="hidden" name="csrf" value="([^"]+)"/.exec(phone.html)![1];
    expect((await postPageForm(`${ownerUrl}/limits`, { cookie: phone.cookie, csrf: limitsCsrf }, { limitsForm: '1', approvalAboveGas: '100' })).status).toBe(303);
    const yes = await postPageForm(`${app.baseUrl}/approve/${approvalToken}/approve`, { cookie: phone.cookie, csrf: form![1] });
    expect(yes.status).toBe(200);
    expect(yes.html).toContain('Purchase approved');
    expect((await app.api.ok('get_purchase', { purchaseId: purchase.id }, buyer.apiKey)).purchase.status).toBe('awaiting_delivery');
    await app.api.ok('request_refund', { purchaseId: purchase.id }, buyer.apiKey);
  });

  test('issue #23: the owner page shows every live owner link of the agent, and the human can revoke the others', async () => {
    // The agent pays a checkout itself (its own browser): it gets an owner link of its own.
    const checkout = await app.api.ok('buy_gas', { packId: 'starter' }, buyer.apiKey);
    const agentForm = await openSandboxCheckout(local(checkout.checkoutUrl));
    const agentPaid = await submitSandboxForm(agentForm, 'approve');
    const agentToken = /\/owner\/([A-Za-z0-9_-]+)/.exec(agentPaid.html)![1];
    expect((await openPage(`${app.baseUrl}/owner/${agentToken}`)).status).toBe(200);

    const owner = await openPage(ownerUrl, human);
    expect(owner.html).toMatch(/<strong>2 owner links<\/strong>/);
    const revoked = await postPageForm(`${ownerUrl}/revoke-others`, owner);
    expect(revoked.status).toBe(303);
    expect(revoked.location).toMatch(/\?revoked=1$/);
    expect((await openPage(`${app.baseUrl}/owner/${agentToken}`)).status).toBe(404);
    const after = await openPage(ownerUrl, human);
    expect(after.status).toBe(200);
    expect(after.html).toMatch(/Only this link opens the owner page/);
  });

  test('a revoked owner link opens nothing, and its cookie no longer approves', async () => {
    const owner = await openPage(ownerUrl, human);
    const revoked = await postPageForm(`${ownerUrl}/revoke`, owner);
    expect(revoked.status).toBe(200);
    expect((await openPage(ownerUrl)).status).toBe(404);

    const before = await wallet(app, buyer);
    const { purchase } = await app.api.ok('purchase_service', { listingId: listings[120] }, buyer.apiKey);
    expect(purchase.status).toBe('awaiting_approval');
    const page = await openPage(local(purchase.approvalUrl), human);
    expect(page.html).toMatch(/Open your owner link/);
    expect(page.html).not.toMatch(/<form[^>]*\/approve"/);
    const refused = await postPageForm(`${local(purchase.approvalUrl)}/approve`, agentBrowser(page, purchase.approvalUrl));
    expect(refused.status).toBe(403);
    expect(refused.html).toMatch(/Open your owner link/);
    expect((await app.api.ok('get_purchase', { purchaseId: purchase.id }, buyer.apiKey)).purchase.status).toBe('awaiting_approval');
    expect(await wallet(app, buyer)).toMatchObject({ gasBalance: before.gasBalance - 120, heldGas: before.heldGas + 120 });
  });
});
