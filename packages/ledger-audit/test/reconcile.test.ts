/**
 * The reconciling audit (issue 39) on the whole marketplace: a normal life of gas, purchases, a refund, a
 * referral and a cash-out reconciles; money made up by calling the ledger's steps directly (a credit for a
 * checkout that was never paid, a hold and settle for a purchase escrow never had, a settle whose split is
 * not escrow's) is reported by check name with the offending ids — by the admin API and the operator script.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import type { Middleware } from 'moleculer';
import { base62 } from '../../ids';
import { LEDGER } from '../../contracts/ledger';
import { PAYMENTS } from '../../contracts/payments';
import { eventually, REPO_ROOT, startTestApp, TEST_DATABASE_URL, type TestApp } from '../../../test/kit';
import { buyGasByCard, decideSandboxCheckout } from '../../../test/kit/checkout';
import { auditOf, expectLedgerReconciled } from '../../../test/kit/ledger';
import { listService, MAINNET_ADDRESS, TXID } from '../../../services/payments/test/payouts-helpers';
import type { AuditCheck, AuditReport } from '..';

const ADMIN_TOKEN = 'reconcile-admin-token-0123456789';
/** PGlite in memory by default; a fresh database on the real PostgreSQL of TEST_DATABASE_URL when set. */
const POSTGRES = Boolean(TEST_DATABASE_URL);

const RECONCILE_CHECKS = [
  'gas_credits_match_paid_checkouts',
  'paid_checkouts_credited',
  'settled_holds_match_completed_purchases',
  'completed_purchases_settled',
  'voided_holds_match_refunded_purchases',
  'refunded_purchases_voided',
  'cashout_debits_match_payouts',
  'payouts_debited',
  'referral_bonuses_match_escrow_referrals',
  'qualified_referrals_have_ledger_outcomes',
];

/** What a red team on the bus does to the ledger's steps, switched on for one call at a time. */
const tamper = { zeroFeeOnNextHold: false, ledgerDownForNextCredit: false };
const RedTeam: Middleware = {
  name: 'RedTeam',
  localAction(next: (ctx: any) => Promise<unknown>, action: any) {
    if (action.name === LEDGER.hold) {
      return (ctx: any) => {
        if (tamper.zeroFeeOnNextHold) {
          tamper.zeroFeeOnNextHold = false;
          ctx.params = { ...ctx.params, platformFeeGas: 0, sellerNetGas: ctx.params.amountGas };
        }
        return next(ctx);
      };
    }
    if (action.name === LEDGER.creditGasPurchase) {
      return (ctx: any) => {
        if (tamper.ledgerDownForNextCredit) {
          tamper.ledgerDownForNextCredit = false;
          return Promise.reject(new Error('the ledger did not answer (test)'));
        }
        return next(ctx);
      };
    }
    return next;
  },
} as unknown as Middleware;

const check = (report: AuditReport, name: string): AuditCheck => report.checks.find((c) => c.name === name)!;

async function adminAudit(app: TestApp, query: string) {
  const res = await fetch(`${app.baseUrl}/api/admin/ledger/audit${query}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  return { status: res.status, body: (await res.json()) as any };
}

/** `npm run audit:ledger -- <args>` against the app under test: its exit code and what it printed. */
function runAuditScript(app: TestApp, args: string[]): Promise<{ code: number; stdout: string }> {
  const env = { ...process.env, MARKET_BASE_URL: app.baseUrl, ADMIN_TOKEN, DATABASE_URL: '', TRANSPORTER: '' };
  return new Promise((resolve) => {
    execFile(path.join(REPO_ROOT, 'node_modules/.bin/tsx'), ['scripts/audit-ledger.ts', ...args], { cwd: REPO_ROOT, env }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 2) : 0, stdout: `${stdout}${stderr}` });
    });
  });
}

async function agent(app: TestApp, name: string, extra: Record<string, unknown> = {}) {
  const r = await app.api.register(`${name} ${base62(4)}`, extra);
  return { id: r.agent.id as string, apiKey: r.apiKey };
}

/** Buy, deliver, confirm; waits until the ledger has posted the hold. */
async function completedPurchase(app: TestApp, listingId: string, buyer: { apiKey: string }, seller: { apiKey: string }): Promise<string> {
  const { purchase } = await app.api.ok('purchase_service', { listingId }, buyer.apiKey);
  await app.api.ok('deliver_work', { purchaseId: purchase.id, delivery: { summary: 'Tests written' } }, seller.apiKey);
  await app.api.ok('confirm_delivery', { purchaseId: purchase.id }, buyer.apiKey);
  await eventually(async () => (await app.call(LEDGER.getHold, { purchaseId: purchase.id }))?.status === 'posted');
  return purchase.id;
}

describe('the reconciling audit: a normal life of the marketplace', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { ADMIN_TOKEN }, middlewares: [RedTeam], postgres: POSTGRES });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('gas by card, a completed and a refunded purchase, a referral and a paid cash-out reconcile: every check ok, nothing skipped', async () => {
    const referrer = await agent(app, 'Referrer');
    const seller = await agent(app, 'Seller');
    const buyer = await agent(app, 'Buyer', { referredBy: referrer.id });
    await buyGasByCard(app, buyer.apiKey, 'builder');
    const listingId = await listService(app, seller.apiKey, 600);

    await completedPurchase(app, listingId, buyer, seller);
    const { purchase: refunded } = await app.api.ok('purchase_service', { listingId }, buyer.apiKey);
    await app.api.ok('request_refund', { purchaseId: refunded.id, reason: 'changed my mind' }, buyer.apiKey);

    await app.api.ok('connect_payouts', { btcAddress: MAINNET_ADDRESS }, seller.apiKey);
    const { cashout } = await app.api.ok('request_cashout', {}, seller.apiKey);
    const paid = await fetch(`${app.baseUrl}/api/admin/payouts/${cashout.id}/pay`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ btcTxid: TXID, btcAmount: '0.00529' }),
    });
    expect(paid.status).toBe(200);
    // The referred buyer's first funded purchase qualified the referral: the ledger pays it from escrow's event.
    await eventually(async () => (await app.call(LEDGER.referralRecords, { ids: [buyer.id] })).items.length === 1);

    const report = await expectLedgerReconciled(app);
    expect(report.checks.map((c) => c.name)).toEqual(expect.arrayContaining(RECONCILE_CHECKS));
    expect(check(report, 'gas_credits_match_paid_checkouts').message).toBe('all 1 gas-purchase credits match a paid checkout (same agent, gas and session)');
    expect(check(report, 'settled_holds_match_completed_purchases').message).toMatch(/^all 1 settled holds match a completed purchase/);
    expect(check(report, 'refunded_purchases_voided').message).toBe('all 1 refunded or failed purchases have their hold voided');
    expect(check(report, 'payouts_debited').message).toBe('all 1 cash-outs have the ledger debit their state needs');
    expect(check(report, 'referral_bonuses_match_escrow_referrals').message).toMatch(/^all 1 referral outcomes/);
    // Page by page (one record a page here) it reads the same: every cursor is followed to the end.
    const paged = await expectLedgerReconciled(app, { pageSize: 1 });
    expect(paged.checks.map((c) => c.message)).toEqual(report.checks.map((c) => c.message));

    // The same report from the admin API and the operator script (exit code 0: clean).
    const http = await adminAudit(app, '?reconcile=1');
    expect(http.status).toBe(200);
    expect(http.body.result.ok).toBe(true);
    expect(http.body.result.checks.map((c: AuditCheck) => c.name)).toEqual(expect.arrayContaining(RECONCILE_CHECKS));
    expect((await adminAudit(app, '')).body.result.checks.map((c: AuditCheck) => c.name)).not.toContain('paid_checkouts_credited');
    expect((await adminAudit(app, '?reconcile=1&graceSeconds=soon')).status).toBe(400);
    const script = await runAuditScript(app, ['--reconcile']);
    expect(script.stdout).toContain('[ OK ] paid_checkouts_credited');
    expect(script.code).toBe(0);
  }, 60_000);

  it('a paid checkout the ledger has not credited yet is in flight during the grace period, a violation after it, clean once credited', async () => {
    const buyer = await agent(app, 'Late buyer');
    const checkout = await app.api.ok('buy_gas', { packId: 'starter' }, buyer.apiKey);
    tamper.ledgerDownForNextCredit = true;
    await decideSandboxCheckout(`${app.baseUrl}${new URL(checkout.checkoutUrl).pathname}`, 'approve');
    expect(tamper.ledgerDownForNextCredit).toBe(false);

    const young = check(await auditOf(app, { reconcile: true }), 'paid_checkouts_credited');
    expect(young).toMatchObject({ ok: true, details: { inFlight: [{ sessionId: checkout.sessionId, status: 'paid' }] } });
    expect(young.message).toMatch(/; 1 in flight \(younger than 300 s\)$/);

    app.clock.advance(6 * 60_000);
    const old = check(await auditOf(app, { reconcile: true }), 'paid_checkouts_credited');
    expect(old).toMatchObject({ ok: false, details: { problems: [{ sessionId: checkout.sessionId, problem: 'the checkout is paid but the ledger never credited it' }] } });
    expect((await runAuditScript(app, ['--reconcile'])).code).toBe(1);

    // The payments sweeper finishes the credit under the checkout's key: reconciled.
    await app.call(PAYMENTS.sweepCheckouts);
    await expectLedgerReconciled(app, { graceMs: 0 });
  }, 60_000);
});

describe('the reconciling audit: money made up on the ledger’s own steps', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { ADMIN_TOKEN }, middlewares: [RedTeam], postgres: POSTGRES });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('reports a credit for a checkout never paid, a settle for a purchase escrow never had, and a split that is not escrow’s', async () => {
    const victim = await agent(app, 'Victim');
    const attacker = await agent(app, 'Attacker');
    const seller = await agent(app, 'Seller');
    await buyGasByCard(app, victim.apiKey, 'builder');
    const listingId = await listService(app, seller.apiKey, 600);

    // 1,000,000 gas minted under a checkout key for a session payments never had.
    await app.call(LEDGER.creditGasPurchase, { key: 'checkout:cko_forged', agentId: attacker.id, gas: 1_000_000, sessionId: 'cko_forged', packId: 'fleet' });
    // The victim's gas held and settled to the attacker for a purchase escrow never had, with no fee.
    const fake = `pur_rtfake${base62(8)}`;
    await app.call(LEDGER.hold, { key: `purchase:${fake}:hold`, purchaseId: fake, buyerId: victim.id, sellerId: attacker.id, amountGas: 300, platformFeeGas: 0, sellerNetGas: 300 });
    await app.call(LEDGER.settle, { key: `purchase:${fake}:settle`, purchaseId: fake });
    // A real purchase whose hold was made with another split than escrow quoted (fee 0 instead of 60).
    tamper.zeroFeeOnNextHold = true;
    const skewed = await completedPurchase(app, listingId, victim, seller);
    expect(tamper.zeroFeeOnNextHold).toBe(false);

    // The ledger's own invariants all hold: only the reconciliation sees it.
    expect((await auditOf(app)).ok).toBe(true);
    const report = await auditOf(app, { reconcile: true });
    expect(report.ok).toBe(false);

    const credits = check(report, 'gas_credits_match_paid_checkouts');
    expect(credits).toMatchObject({ ok: false, message: '1 of 2 gas-purchase credits match no paid checkout (same agent, gas and session)' });
    expect(credits.details!.problems).toEqual([
      { transactionId: expect.any(String), key: 'checkout:cko_forged', sessionId: 'cko_forged', agentId: attacker.id, gas: 1_000_000, problem: 'payments has no checkout with this session id' },
    ]);

    const settled = check(report, 'settled_holds_match_completed_purchases');
    expect(settled).toMatchObject({ ok: false, message: expect.stringMatching(/^2 of 2 settled holds match no completed purchase/) });
    expect(settled.details!.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ purchaseId: fake, buyerId: victim.id, sellerId: attacker.id, platformFeeGas: 0, problem: 'escrow has no such purchase' }),
        expect.objectContaining({ purchaseId: skewed, platformFeeGas: 0, sellerNetGas: 600, problem: "platformFeeGas 0 ≠ purchase's 60; sellerNetGas 600 ≠ purchase's 540" }),
      ]),
    );
    // Everything else still reconciles: the victim's own checkout, escrow's completed purchases (their holds are posted).
    const others = report.checks.filter((c) => RECONCILE_CHECKS.includes(c.name) && !['gas_credits_match_paid_checkouts', 'settled_holds_match_completed_purchases'].includes(c.name));
    expect(others.filter((c) => !c.ok || c.skipped)).toEqual([]);

    // The operator sees the same from the admin API and the script: exit code 1 with --reconcile, 0 without.
    const http = await adminAudit(app, '?reconcile=1');
    expect(http.body.result.ok).toBe(false);
    const script = await runAuditScript(app, ['--reconcile']);
    expect(script.code).toBe(1);
    expect(script.stdout).toContain('[FAIL] gas_credits_match_paid_checkouts');
    expect(script.stdout).toContain('cko_forged');
    expect(script.stdout).toContain(fake);
    expect((await runAuditScript(app, [])).code).toBe(0);
  }, 60_000);
});
