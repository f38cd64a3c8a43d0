/**
 * Budgets under racing purchases on real PostgreSQL (PGlite is one connection, so a race there
 * proves nothing): the limits row is locked in the purchase's transaction, so purchases fired at
 * once can never together pass the human's budget.
 */
import { describeWithPostgres, startTestApp, type TestApp } from '../../../test/kit';
import { expectLedgerClean } from '../../../test/kit/ledger';
import { ESCROW } from '../../../packages/contracts/escrow';
import { scenario, wallet } from './helpers';

describeWithPostgres('spending limits on PostgreSQL', () => {
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

  test('20 purchases at once under a daily budget for 3 → exactly 3 held, 17 refused with daily_budget', async () => {
    const s = await scenario(app, { fundedGas: 10_000 });
    await app.call(ESCROW.setLimits, { agentId: s.buyer.id, limits: { dailyBudgetGas: 3 * 250 + 200 } });
    const results = await Promise.all(Array.from({ length: 20 }, () => app.api.call('purchase_service', { listingId: s.listingId }, s.buyer.apiKey)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(3);
    const refused = results.filter((r) => r.status === 403 && r.body.error?.details?.rule === 'daily_budget');
    expect(refused).toHaveLength(17);
    expect(await wallet(app, s.buyer)).toMatchObject({ gasBalance: 10_000 - 750, heldGas: 750 });
    const limits = (await app.api.ok('wallet', {}, s.buyer.apiKey)).spendingLimits;
    expect(limits).toMatchObject({ spentTodayGas: 750, remainingTodayGas: 200 });
    // Refused purchases left no row behind.
    expect((await app.api.ok('list_orders', { role: 'buyer', limit: 100 }, s.buyer.apiKey)).purchases).toHaveLength(3);
  });

  test('purchases needing approval count against the weekly budget when made, even racing', async () => {
    const s = await scenario(app, { fundedGas: 10_000 });
    await app.call(ESCROW.setLimits, { agentId: s.buyer.id, limits: { weeklyBudgetGas: 3 * 250, approvalAboveGas: 100 } });
    const results = await Promise.all(Array.from({ length: 20 }, () => app.api.call('purchase_service', { listingId: s.listingId }, s.buyer.apiKey)));
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(3);
    expect(ok.every((r) => r.body.result.purchase.status === 'awaiting_approval')).toBe(true);
    expect(results.filter((r) => r.status === 403 && r.body.error?.details?.rule === 'weekly_budget')).toHaveLength(17);
    expect(await wallet(app, s.buyer)).toMatchObject({ heldGas: 750 });
    // Declining gives the gas and the budget back.
    for (const r of ok) {
      const token = new URL(r.body.result.purchase.approvalUrl).pathname.split('/').pop()!;
      await app.call(ESCROW.decideApproval, { token, decision: 'decline' });
    }
    expect(await wallet(app, s.buyer)).toMatchObject({ gasBalance: 10_000, heldGas: 0 });
    expect((await app.api.ok('whoami', {}, s.buyer.apiKey)).agent.spendingLimits).toMatchObject({ spentThisWeekGas: 0, remainingThisWeekGas: 750 });
  });
});
