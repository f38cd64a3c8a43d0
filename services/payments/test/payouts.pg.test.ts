/** Racing cash-out requests on real PostgreSQL (PGlite is one connection, so races there prove nothing). */
import { describeWithPostgres, startTestApp, type TestApp } from '../../../test/kit';
import { balanceOf, sellerWithEarnings, withdrawableOf } from './payouts-helpers';
import { expectLedgerClean } from '../../../test/kit/ledger';

describeWithPostgres('cash-out races (PostgreSQL)', () => {
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

  it('10 racing "cash out everything" requests: exactly one succeeds, the rest are refused', async () => {
    const s = await sellerWithEarnings(app); // 540 withdrawable
    const results = await Promise.all(Array.from({ length: 10 }, () => app.api.call('request_cashout', {}, s.apiKey)));
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    expect(ok[0].body.result.cashout).toMatchObject({ amountGas: 540, status: 'pending' });
    for (const r of results.filter((x) => x.status !== 200)) {
      expect(r.status).toBe(409);
      expect(r.body.error?.hint).toBeTruthy();
    }
    expect(await balanceOf(app, s.agent.id)).toBe(0);
    expect(await withdrawableOf(app, s.agent.id)).toBe(0);
    // How many got past the friendly pre-check and were stopped by the ledger's atomic check (informative).
    const failed = (await app.call<any[]>('payments.listPayouts', { status: 'failed' }, { internal: true })).filter((c) => c.agentId === s.agent.id);
    if (process.env.DEBUG_RACES) console.log(`ledger refusals: ${failed.length} of ${results.length - 1}`);
  });

  it('12 racing requests of 500 against 1620 withdrawable never take more than withdrawable', async () => {
    const s = await sellerWithEarnings(app, 1800); // 1620 earned
    const results = await Promise.all(Array.from({ length: 12 }, () => app.api.call('cash_out', { amountGas: 500 }, s.apiKey)));
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(3);
    const taken = ok.reduce((sum, r) => sum + r.body.result.cashout.amountGas, 0);
    expect(taken).toBe(1500);
    expect(await balanceOf(app, s.agent.id)).toBe(120);
    const listed = await app.call<any[]>('payments.listCashouts', { agentId: s.agent.id });
    expect(listed.filter((c) => c.status === 'pending')).toHaveLength(3);
    // Every refused request left a failed (hidden) row or none at all; none is stuck half-way.
    const stuck = await app.call<any[]>('payments.listPayouts', { status: 'requested' }, { internal: true });
    expect(stuck).toEqual([]);
  });

  it('racing pay and reject of one payout: exactly one wins, the gas moves once', async () => {
    const s = await sellerWithEarnings(app);
    const { cashout } = await app.api.ok('request_cashout', {}, s.apiKey);
    const meta = { internal: true, operator: 'race' };
    const attempts = await Promise.allSettled([
      app.call('payments.markPayoutPaid', { cashoutId: cashout.id, btcTxid: 'c3'.repeat(32), btcAmount: '0.00529' }, meta),
      app.call('payments.rejectPayout', { cashoutId: cashout.id, reason: 'race test' }, meta),
      app.call('payments.markPayoutPaid', { cashoutId: cashout.id, btcTxid: 'c3'.repeat(32), btcAmount: '0.00529' }, meta),
      app.call('payments.rejectPayout', { cashoutId: cashout.id, reason: 'race test' }, meta),
    ]);
    const final = await app.call('payments.getPayout', { cashoutId: cashout.id }, meta);
    expect(['paid', 'rejected']).toContain(final.status);
    expect(attempts.some((a) => a.status === 'fulfilled')).toBe(true);
    expect(await balanceOf(app, s.agent.id)).toBe(final.status === 'rejected' ? 540 : 0);
  });
});
