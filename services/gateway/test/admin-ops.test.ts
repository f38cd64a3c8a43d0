/** /api/admin operator routes (payouts, disputes, listings, reports, audit log) and the admin CLI, over HTTP. */
import { startTestApp, type TestApp } from '../../../test/kit';
import { OperatorError } from '../../../packages/operator-client';
import { run } from '../../../scripts/admin';
import { MAINNET_ADDRESS, TXID, balanceOf, buyListing, sellerWithEarnings } from '../../payments/test/payouts-helpers';
import { expectLedgerClean } from '../../../test/kit/ledger';

const TOKEN = 'test-admin-token-0123456789';

async function admin(app: TestApp, method: 'GET' | 'POST', path: string, body?: unknown, token: string | null = TOKEN) {
  const res = await fetch(`${app.baseUrl}/api/admin${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe('admin auth', () => {
  it('no ADMIN_TOKEN configured → the admin API is off (404) even with a token', async () => {
    const app = await startTestApp();
    try {
      const r = await admin(app, 'GET', '/payouts', undefined, 'anything');
      expect(r.status).toBe(404);
      expect(r.body.error.message).toMatch(/off/);
      expect(r.body.error.hint).toMatch(/ADMIN_TOKEN/);
    } finally {
      await app.stop();
    }
  });
});

describe('operator routes', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { ADMIN_TOKEN: TOKEN } });
  });
  afterAll(async () => {
    await app?.stop();
  });
  afterEach(async () => {
    await expectLedgerClean(app);
  });

  it('admin auth: wrong or missing token → 401; the right token → 200', async () => {
    expect((await admin(app, 'GET', '/payouts', undefined, 'wrong-token')).status).toBe(401);
    expect((await admin(app, 'GET', '/payouts', undefined, `${TOKEN}x`)).status).toBe(401);
    expect((await admin(app, 'GET', '/payouts', undefined, null)).status).toBe(401);
    const ok = await admin(app, 'GET', '/payouts');
    expect(ok.status).toBe(200);
    expect(ok.body.result).toEqual({ status: 'pending', payouts: [] });
    // A refused call did nothing and wrote nothing.
    expect((await admin(app, 'GET', '/audit-log')).body.result.entries).toEqual([]);
  });

  it('lists, pays and rejects payouts, each recorded in the audit log with before/after', async () => {
    const s1 = await sellerWithEarnings(app);
    const s2 = await sellerWithEarnings(app);
    const c1 = (await app.api.ok('request_cashout', {}, s1.apiKey)).cashout;
    const c2 = (await app.api.ok('request_cashout', {}, s2.apiKey)).cashout;

    const list = await admin(app, 'GET', '/payouts?status=pending');
    expect(list.status).toBe(200);
    expect(list.body.result.payouts.map((p: any) => p.id)).toEqual(expect.arrayContaining([c1.id, c2.id]));
    expect(list.body.result.payouts[0]).toMatchObject({ agentId: expect.any(String), btcAddress: MAINNET_ADDRESS, amountGas: 540, feeGas: 11, netGas: 529 });
    expect((await admin(app, 'GET', '/payouts?status=bogus')).status).toBe(400);

    const badPay = await admin(app, 'POST', `/payouts/${c1.id}/pay`, { btcTxid: TXID });
    expect(badPay.status).toBe(400);
    expect(badPay.body.error.hint).toBeTruthy();

    const paid = await admin(app, 'POST', `/payouts/${c1.id}/pay`, { btcTxid: TXID, btcAmount: '0.00529' });
    expect(paid.status).toBe(200);
    expect(paid.body.result.payout).toMatchObject({ id: c1.id, status: 'paid', btcTxid: TXID, btcAmount: '0.00529000', operator: 'admin-token' });

    const noReason = await admin(app, 'POST', `/payouts/${c2.id}/reject`, {});
    expect(noReason.status).toBe(400);
    expect(await balanceOf(app, s2.agent.id)).toBe(0);
    const rejected = await admin(app, 'POST', `/payouts/${c2.id}/reject`, { reason: 'address on a deny list' });
    expect(rejected.status).toBe(200);
    expect(rejected.body.result.payout).toMatchObject({ status: 'rejected', rejectReason: 'address on a deny list' });
    expect(await balanceOf(app, s2.agent.id)).toBe(540);

    const again = await admin(app, 'POST', `/payouts/${c2.id}/pay`, { btcTxid: TXID, btcAmount: '0.005' });
    expect(again.status).toBe(409);

    const log = (await admin(app, 'GET', '/audit-log')).body.result.entries;
    const pay = log.find((e: any) => e.action === 'payouts.pay' && e.target === c1.id && e.ok);
    expect(pay).toMatchObject({ operator: 'admin-token', params: { btcTxid: TXID, btcAmount: '0.00529' } });
    expect(pay.before.status).toBe('pending');
    expect(pay.after.payout.status).toBe('paid');
    expect(typeof pay.at).toBe('string');
    const rej = log.find((e: any) => e.action === 'payouts.reject' && e.target === c2.id && e.ok);
    expect(rej.before.status).toBe('pending');
    expect(rej.after.payout.status).toBe('rejected');
    // The refused attempt is logged too.
    expect(log.find((e: any) => e.action === 'payouts.pay' && e.target === c2.id && !e.ok)?.error).toMatch(/rejected/);
    const filtered = (await admin(app, 'GET', '/audit-log?action=payouts.reject')).body.result.entries;
    expect(filtered.every((e: any) => e.action === 'payouts.reject')).toBe(true);
  });

  it('seed flag by agent id is set and cleared, and audited', async () => {
    const a = await app.api.register('Seedling');
    const on = await admin(app, 'POST', `/listings/${a.agent.id}/seed`, {});
    expect(on.status).toBe(200);
    expect(on.body.result.agent).toMatchObject({ id: a.agent.id, isSeed: true });
    const off = await admin(app, 'POST', `/listings/${a.agent.id}/seed`, { isSeed: false });
    expect(off.body.result.agent.isSeed).toBe(false);
    expect((await admin(app, 'POST', `/listings/${a.agent.id}/seed`, { isSeed: 'yes' })).status).toBe(400);
    const log = (await admin(app, 'GET', '/audit-log?action=listings.seed')).body.result.entries;
    expect(log[0]).toMatchObject({ target: a.agent.id, ok: true, before: { isSeed: false }, after: { agent: { isSeed: true } } });
  });

  it('lists a dispute with both sides\' messages and the delivery, and resolves it as a refund (API and CLI)', async () => {
    const target = { baseUrl: app.baseUrl, token: TOKEN };
    const s = await sellerWithEarnings(app);
    const { buyer, purchaseId } = await buyListing(app, s.listingId, 600);
    await app.api.ok('deliver_work', { purchaseId, delivery: { summary: 'Half of the tests' } }, s.apiKey);
    await app.api.ok('send_message', { purchaseId, body: 'Only half of the functions are tested.' }, buyer.apiKey);
    await app.api.ok('send_message', { purchaseId, body: 'The rest were out of scope.' }, s.apiKey);
    await app.api.ok('dispute_purchase', { purchaseId, reason: 'Delivery covers only half of the module.' }, buyer.apiKey);

    const list = await admin(app, 'GET', '/disputes');
    expect(list.status).toBe(200);
    const d = list.body.result.disputes.find((x: any) => x.purchase.id === purchaseId);
    expect(d.reason).toBe('Delivery covers only half of the module.');
    expect(d.messages.map((m: any) => m.body)).toEqual(['Only half of the functions are tested.', 'The rest were out of scope.']);
    expect(d.delivery.delivery.summary).toBe('Half of the tests');

    const out: string[] = [];
    await run(['disputes', 'list'], target, (l) => out.push(l));
    const text = out.join('\n');
    expect(text).toContain(purchaseId);
    expect(text).toContain('Delivery covers only half of the module.');
    expect(text).toContain('The rest were out of scope.');
    expect(text).toContain('Half of the tests');

    await expect(run(['disputes', 'resolve', purchaseId], target, () => undefined)).rejects.toThrow(/--refund/);
    out.length = 0;
    await run(['disputes', 'resolve', purchaseId, '--refund', '--note', 'incomplete delivery'], target, (l) => out.push(l));
    expect(out.join('\n')).toMatch(/refunded to the buyer/);
    expect(await balanceOf(app, buyer.agent.id)).toBe(600);
    // Resolving twice is refused.
    expect((await admin(app, 'POST', `/disputes/${purchaseId}/resolve`, { outcome: 'release' })).status).toBe(409);

    const log = (await admin(app, 'GET', '/audit-log?action=disputes.resolve')).body.result.entries;
    const entry = log.find((e: any) => e.target === purchaseId && e.ok);
    expect(entry).toMatchObject({ params: { outcome: 'refund', note: 'incomplete delivery' } });
    expect(entry.before.purchase.status).toBe('disputed');
    expect(entry.after.purchase.status).toBe('refunded');
    // The lost dispute now blocks the seller's cash-out.
    expect((await app.api.call('request_cashout', {}, s.apiKey)).body.error?.details?.rule).toBe('no_lost_dispute');
  });

  it('marks a listing\'s seller as seed, and takes a listing down with a reason', async () => {
    const target = { baseUrl: app.baseUrl, token: TOKEN };
    const s = await sellerWithEarnings(app, 600, null);
    const out: string[] = [];
    await run(['listings', 'seed', s.listingId], target, (l) => out.push(l));
    expect(out.join('\n')).toMatch(/now a seed seller/);
    expect((await app.call('agents.get', { agentId: s.agent.id })).isSeed).toBe(true);
    await run(['listings', 'seed', s.listingId, '--off'], target, (l) => out.push(l));
    expect((await app.call('agents.get', { agentId: s.agent.id })).isSeed).toBe(false);

    await expect(run(['listings', 'takedown', s.listingId], target, () => undefined)).rejects.toThrow(/--reason is required/);
    const r = await admin(app, 'POST', `/listings/${s.listingId}/takedown`, { reason: 'misleading description' });
    expect(r.status).toBe(200);
    expect(r.body.result.listing.status).toBe('removed');
    expect((await admin(app, 'POST', '/listings/lst_doesnotexist/takedown', { reason: 'whatever' })).status).toBe(404);

    const log = (await admin(app, 'GET', '/audit-log?action=listings.takedown')).body.result.entries;
    const entry = log.find((e: any) => e.target === s.listingId && e.ok);
    expect(entry).toMatchObject({ params: { reason: 'misleading description' } });
    expect(entry.before.status).toBe('active');
    expect(entry.after.listing.status).toBe('removed');
    expect(log.find((e: any) => e.target === 'lst_doesnotexist')).toMatchObject({ ok: false });
  });

  it('shows bug and experience reports', async () => {
    const target = { baseUrl: app.baseUrl, token: TOKEN };
    const a = await app.api.register('Reporter');
    await app.api.ok('report_bug', { title: 'Wallet total looks off', description: 'After a refund the wallet showed the old balance for a moment.' }, a.apiKey);
    await app.api.ok('report_experience', { rating: 4, journeyStep: 'other', whatWorked: 'Cash-out was clear.' }, a.apiKey);
    const bugs = await admin(app, 'GET', '/reports/bugs?limit=10');
    expect(bugs.status).toBe(200);
    expect(JSON.stringify(bugs.body.result)).toContain('Wallet total looks off');
    const exps = await admin(app, 'GET', '/reports/experiences');
    expect(JSON.stringify(exps.body.result)).toContain('Cash-out was clear.');
    const out: string[] = [];
    await run(['reports', 'bugs'], target, (l) => out.push(l));
    expect(out.join('\n')).toContain('Wallet total looks off');
    out.length = 0;
    await run(['reports', 'experiences'], target, (l) => out.push(l));
    expect(out.join('\n')).toMatch(/1 report/);
  });

  it('refuses bad input for disputes and take-downs without calling anything', async () => {
    expect((await admin(app, 'POST', '/disputes/pur_x/resolve', { outcome: 'maybe' })).status).toBe(400);
    expect((await admin(app, 'POST', '/listings/lst_x/takedown', {})).status).toBe(400);
    expect((await admin(app, 'GET', '/audit-log?limit=0')).status).toBe(400);
  });

  it('the CLI lists, pays and rejects with readable output and clear errors', async () => {
    const target = { baseUrl: app.baseUrl, token: TOKEN };
    const s = await sellerWithEarnings(app);
    const c = (await app.api.ok('request_cashout', {}, s.apiKey)).cashout;
    const out: string[] = [];
    const print = (line: string) => out.push(line);

    await run(['payouts', 'list'], target, print);
    expect(out.join('\n')).toMatch(/ID\s+AGENT\s+STATUS\s+GAS\s+FEE\s+NET/);
    expect(out.join('\n')).toContain(c.id);

    await expect(run(['payouts', 'pay', c.id, '--btc', '0.00529'], target, print)).rejects.toThrow(/--txid is required/);
    await expect(run(['payouts', 'pay', 'csh_missing', '--txid', TXID, '--btc', '0.005'], target, print)).rejects.toThrow(OperatorError);
    await expect(run(['payouts', 'frobnicate'], target, print)).rejects.toThrow(/use list, pay or reject/);
    await expect(run(['payouts', 'list'], { baseUrl: app.baseUrl, token: 'wrong' }, print)).rejects.toThrow(/401 unauthorized/);

    out.length = 0;
    await run(['payouts', 'pay', c.id, '--txid', TXID, '--btc', '0.00529'], target, print);
    expect(out.join('\n')).toMatch(/marked paid/);
    expect(out.join('\n')).toContain(TXID);

    out.length = 0;
    await run(['payouts', 'list', '--status', 'paid', '--json'], target, print);
    expect(JSON.parse(out.join('\n')).payouts.map((p: any) => p.id)).toContain(c.id);

    out.length = 0;
    await run(['audit-log'], target, print);
    expect(out.join('\n')).toMatch(/payouts\.pay/);

    out.length = 0;
    await run(['help'], target, print);
    expect(out.join('\n')).toContain('payouts pay <cashoutId> --txid');

    // The wallet shows it paid.
    const wallet = await app.api.ok('wallet', {}, s.apiKey);
    expect(wallet.cashouts.find((x: any) => x.id === c.id)).toMatchObject({ status: 'paid', btcTxid: TXID });
  });
});
