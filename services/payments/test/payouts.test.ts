/** Cash-out: payout address, eligibility, fee arithmetic, pay / reject, recovery — over HTTP on in-memory PGlite. */
import { startTestApp, type TestApp } from '../../../test/kit';
import { cashoutSplit } from '../../../packages/market-rules';
import { BAD_CHECKSUM_ADDRESS, MAINNET_ADDRESS, MAINNET_ADDRESS_2, TESTNET_ADDRESS, TXID, balanceOf, buyListing, completeSale, sellerWithEarnings, withdrawableOf } from './payouts-helpers';
import { creditGas, expectLedgerClean } from '../../../test/kit/ledger';

let app: TestApp;
const operator = { internal: true, operator: 'test-operator' };

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.stop();
});
afterEach(async () => {
  await expectLedgerClean(app);
});

describe('cash-out fee arithmetic (market rules)', () => {
  it('rounds the 2% fee half up and gives the rest to the seller', () => {
    expect(cashoutSplit(540)).toEqual({ amountGas: 540, feeGas: 11, netGas: 529 });
    expect(cashoutSplit(500)).toEqual({ amountGas: 500, feeGas: 10, netGas: 490 });
    expect(cashoutSplit(525)).toEqual({ amountGas: 525, feeGas: 11, netGas: 514 }); // 10.5 → 11
  });
});

describe('connect_payouts', () => {
  it('refuses a bad checksum, a testnet address on mainnet and junk, changing nothing', async () => {
    const a = await app.api.register('Addr');
    for (const btcAddress of [BAD_CHECKSUM_ADDRESS, TESTNET_ADDRESS, 'bc1notanaddressatall000000']) {
      const r = await app.api.call('connect_payouts', { btcAddress }, a.apiKey);
      expect(r.status).toBe(400);
      expect(r.body.error?.code).toBe('invalid_arguments');
      expect(r.body.error?.hint).toBeTruthy();
    }
    expect(await app.call('payments.payoutAddress', { agentId: a.agent.id })).toBeNull();
  });

  it('issue #23: refuses the well-known test-vector addresses (their keys are public), in any case, with a clear 400', async () => {
    const a = await app.api.register('Vectors');
    for (const btcAddress of [
      'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', // BIP-173, P2WPKH of the private key 1
      'BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4',
      'bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3', // BIP-173, P2WSH
      'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0', // BIP-350, P2TR
      '1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH', // P2PKH of the private key 1 (compressed)
      '1EHNa6Q4Jz2uvNExL497mE43ikXhwF6kZm', // … uncompressed
    ]) {
      const r = await app.api.call('connect_payouts', { btcAddress }, a.apiKey);
      expect([btcAddress, r.status, r.body.error?.code, r.body.error?.details?.rule]).toEqual([btcAddress, 400, 'invalid_arguments', 'test_vector']);
      expect(r.body.error?.message).toMatch(/published example|test vector/);
      expect(r.body.error?.hint).toMatch(/your own wallet/);
    }
    expect(await app.call('payments.payoutAddress', { agentId: a.agent.id })).toBeNull();
  });

  it('connects, replaces, and keeps the history', async () => {
    const a = await app.api.register('Addr2');
    const first = await app.api.ok('connect_payouts', { btcAddress: MAINNET_ADDRESS }, a.apiKey);
    expect(first.payouts).toMatchObject({ btcAddress: MAINNET_ADDRESS, network: 'mainnet', addressType: 'p2wpkh', replacedAddress: null });
    const second = await app.api.ok('connect_payouts', { btcAddress: MAINNET_ADDRESS_2 }, a.apiKey);
    expect(second.payouts).toMatchObject({ btcAddress: MAINNET_ADDRESS_2, addressType: 'p2pkh', replacedAddress: MAINNET_ADDRESS });
    expect(await app.call('payments.payoutAddress', { agentId: a.agent.id })).toMatchObject({ btcAddress: MAINNET_ADDRESS_2 });
    const db = (app.broker.getLocalService('payments') as any).db;
    const hist = await db.query('SELECT btc_address, previous_address FROM payments.payout_address_history WHERE agent_id = $1 ORDER BY id', [a.agent.id]);
    expect(hist.rows).toEqual([
      { btc_address: MAINNET_ADDRESS, previous_address: null },
      { btc_address: MAINNET_ADDRESS_2, previous_address: MAINNET_ADDRESS },
    ]);
  });

  it('needs an API key', async () => {
    const r = await app.api.call('connect_payouts', { btcAddress: MAINNET_ADDRESS });
    expect(r.status).toBe(401);
  });
});

describe('request_cashout eligibility', () => {
  it('no payout address → refused, told to connect_payouts; nothing moves', async () => {
    const s = await sellerWithEarnings(app, 600, null);
    const r = await app.api.call('request_cashout', {}, s.apiKey);
    expect(r.status).toBe(409);
    expect(r.body.error?.details?.rule).toBe('payout_address_required');
    expect(r.body.error?.hint).toContain('connect_payouts');
    expect(await balanceOf(app, s.agent.id)).toBe(540);
    expect(await withdrawableOf(app, s.agent.id)).toBe(540);
  });

  it('only bought gas → nothing withdrawable, explained as spendable not withdrawable', async () => {
    const a = await app.api.register('Buyer only');
    await creditGas(app, a.agent.id, 2000);
    await app.api.ok('connect_payouts', { btcAddress: MAINNET_ADDRESS }, a.apiKey);
    const r = await app.api.call('request_cashout', {}, a.apiKey);
    expect(r.status).toBe(409);
    expect(r.body.error?.details?.rule).toBe('sale_earnings_only');
    expect(r.body.error?.message).toMatch(/sale earnings/);
    const r2 = await app.api.call('cash_out', { amountGas: 1000 }, a.apiKey);
    expect(r2.body.error?.details?.rule).toBe('sale_earnings_only');
    expect(await balanceOf(app, a.agent.id)).toBe(2000);
  });

  it('bought gas does not count: 540 earned + 2000 bought → 540 withdrawable, 600 refused', async () => {
    const s = await sellerWithEarnings(app);
    await creditGas(app, s.agent.id, 2000);
    expect(await withdrawableOf(app, s.agent.id)).toBe(540);
    const r = await app.api.call('request_cashout', { amountGas: 600 }, s.apiKey);
    expect(r.status).toBe(409);
    expect(r.body.error?.details).toMatchObject({ rule: 'withdrawable', withdrawableGas: 540 });
    expect(await balanceOf(app, s.agent.id)).toBe(2540);
  });

  it('below the minimum: asked amount < 500, or less than 500 withdrawable', async () => {
    const s = await sellerWithEarnings(app);
    const r = await app.api.call('request_cashout', { amountGas: 499 }, s.apiKey);
    expect(r.status).toBe(400);
    expect(r.body.error?.details).toMatchObject({ rule: 'minimum', minimumGas: 500 });
    expect(r.body.error?.hint).toContain('omit amountGas');

    const small = await sellerWithEarnings(app, 500); // earns 450
    const r2 = await app.api.call('request_cashout', {}, small.apiKey);
    expect(r2.status).toBe(409);
    expect(r2.body.error?.details).toMatchObject({ rule: 'minimum', withdrawableGas: 450 });
    expect(await balanceOf(app, small.agent.id)).toBe(450);
  });
});

describe('request_cashout eligibility: dispute history as a seller', () => {
  it('an open dispute pauses cash-out; released in the seller\'s favour, cash-out works again', async () => {
    const s = await sellerWithEarnings(app);
    const { buyer, purchaseId } = await buyListing(app, s.listingId, 600);
    await app.api.ok('dispute_purchase', { purchaseId, reason: 'The seller has not answered my messages for two days.' }, buyer.apiKey);

    const r = await app.api.call('request_cashout', {}, s.apiKey);
    expect(r.status).toBe(409);
    expect(r.body.error?.details).toMatchObject({ rule: 'no_open_dispute', openAsSeller: 1 });
    expect(r.body.error?.hint).toMatch(/dispute/);
    expect(await balanceOf(app, s.agent.id)).toBe(540);

    await app.call('escrow.resolveDispute', { purchaseId, outcome: 'release', note: 'seller delivered' }, operator);
    const { cashout } = await eventuallyOk(() => app.api.call('request_cashout', {}, s.apiKey));
    expect(cashout.amountGas).toBe(1080);
  });

  it('a dispute lost as seller in the last 90 days blocks cash-out; it opens again after 90 days', async () => {
    const s = await sellerWithEarnings(app);
    const { buyer, purchaseId } = await buyListing(app, s.listingId, 600);
    await app.api.ok('dispute_purchase', { purchaseId, reason: 'Nothing was delivered at all.' }, buyer.apiKey);
    await app.call('escrow.resolveDispute', { purchaseId, outcome: 'refund', note: 'no delivery' }, operator);

    const r = await app.api.call('cash_out', {}, s.apiKey);
    expect(r.status).toBe(403);
    expect(r.body.error?.code).toBe('forbidden');
    expect(r.body.error?.details).toMatchObject({ rule: 'no_lost_dispute', lostLast90Days: 1 });
    expect(r.body.error?.hint).toMatch(/90 days/);
    expect(await balanceOf(app, s.agent.id)).toBe(540);

    app.clock.advanceDays(91);
    const { cashout } = await app.api.ok('request_cashout', {}, s.apiKey);
    expect(cashout).toMatchObject({ amountGas: 540, feeGas: 11, netGas: 529 });
  });
});

/** The ledger settles a release through a durable event: retry until the earnings have arrived. */
async function eventuallyOk(fn: () => Promise<{ status: number; body: any }>): Promise<any> {
  let last: any;
  for (let i = 0; i < 100; i++) {
    last = await fn();
    if (last.status === 200) return last.body.result;
    if (last.body?.error?.details?.rule !== 'no_open_dispute' && last.body?.error?.details?.rule !== 'withdrawable') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`request_cashout kept failing: ${JSON.stringify(last.body)}`);
}

describe('request_cashout, pay and reject', () => {
  it('cashes out all 540: fee 11, net 529, pending; the operator pays it; the wallet shows it paid', async () => {
    const s = await sellerWithEarnings(app);
    const { cashout } = await app.api.ok('request_cashout', {}, s.apiKey);
    expect(cashout).toMatchObject({ amountGas: 540, feeGas: 11, netGas: 529, netUsd: 5.29, status: 'pending', btcAddress: MAINNET_ADDRESS });
    expect(cashout.id).toMatch(/^csh_/);
    expect(typeof cashout.createdAt).toBe('string');
    expect(await balanceOf(app, s.agent.id)).toBe(0);
    expect(await withdrawableOf(app, s.agent.id)).toBe(0);

    const pending = await app.call<any[]>('payments.listPayouts', { status: 'pending' }, operator);
    expect(pending.map((p) => p.id)).toContain(cashout.id);

    const paid = await app.call('payments.markPayoutPaid', { cashoutId: cashout.id, btcTxid: TXID, btcAmount: '0.00529' }, operator);
    expect(paid).toMatchObject({ status: 'paid', btcTxid: TXID, btcAmount: '0.00529000', operator: 'test-operator' });
    // The same instruction again is a no-op; a different txid is refused.
    await app.call('payments.markPayoutPaid', { cashoutId: cashout.id, btcTxid: TXID, btcAmount: 0.00529 }, operator);
    await expect(app.call('payments.markPayoutPaid', { cashoutId: cashout.id, btcTxid: 'b2'.repeat(32), btcAmount: '0.00529' }, operator)).rejects.toMatchObject({ type: 'invalid_state' });
    await expect(app.call('payments.rejectPayout', { cashoutId: cashout.id, reason: 'too late' }, operator)).rejects.toMatchObject({ type: 'invalid_state' });

    const wallet = await app.api.ok('wallet', {}, s.apiKey);
    const mine = wallet.cashouts.find((c: any) => c.id === cashout.id);
    expect(mine).toMatchObject({ status: 'paid', btcTxid: TXID, netGas: 529 });
    expect(wallet.gasBalance).toBe(0);
  });

  it('cash_out (alias) of 500 out of 540: fee 10, net 490; 40 stays, not withdrawable below the minimum', async () => {
    const s = await sellerWithEarnings(app);
    const { cashout } = await app.api.ok('cash_out', { amountGas: 500 }, s.apiKey);
    expect(cashout).toMatchObject({ amountGas: 500, feeGas: 10, netGas: 490, netUsd: 4.9, status: 'pending' });
    expect(await balanceOf(app, s.agent.id)).toBe(40);
    expect(await withdrawableOf(app, s.agent.id)).toBe(40);
    const again = await app.api.call('request_cashout', {}, s.apiKey);
    expect(again.body.error?.details?.rule).toBe('minimum');
  });

  it('reject returns exactly the gas, and it is withdrawable again', async () => {
    const s = await sellerWithEarnings(app);
    await creditGas(app, s.agent.id, 500);
    const { cashout } = await app.api.ok('request_cashout', {}, s.apiKey);
    expect(cashout.amountGas).toBe(540);
    expect(await balanceOf(app, s.agent.id)).toBe(500);

    await expect(app.call('payments.rejectPayout', { cashoutId: cashout.id, reason: 'x' }, operator)).rejects.toMatchObject({ type: 'VALIDATION_ERROR' });
    const rejected = await app.call('payments.rejectPayout', { cashoutId: cashout.id, reason: 'address flagged by our compliance check' }, operator);
    expect(rejected).toMatchObject({ status: 'rejected', rejectReason: 'address flagged by our compliance check' });
    expect(await balanceOf(app, s.agent.id)).toBe(1040);
    expect(await withdrawableOf(app, s.agent.id)).toBe(540);
    // Rejecting again is a no-op; paying a rejected payout is refused.
    await app.call('payments.rejectPayout', { cashoutId: cashout.id, reason: 'address flagged by our compliance check' }, operator);
    expect(await balanceOf(app, s.agent.id)).toBe(1040);
    await expect(app.call('payments.markPayoutPaid', { cashoutId: cashout.id, btcTxid: TXID, btcAmount: '0.001' }, operator)).rejects.toMatchObject({ type: 'invalid_state' });

    const wallet = await app.api.ok('wallet', {}, s.apiKey);
    expect(wallet.cashouts.find((c: any) => c.id === cashout.id)).toMatchObject({ status: 'rejected', rejectReason: 'address flagged by our compliance check' });
  });

  it('a pending cash-out keeps its address when the agent connects another', async () => {
    const s = await sellerWithEarnings(app);
    const { cashout } = await app.api.ok('request_cashout', {}, s.apiKey);
    await app.api.ok('connect_payouts', { btcAddress: MAINNET_ADDRESS_2 }, s.apiKey);
    const p = await app.call('payments.getPayout', { cashoutId: cashout.id }, operator);
    expect(p.btcAddress).toBe(MAINNET_ADDRESS);
  });

  it('the same Idempotency-Key returns the same cash-out and moves the gas once', async () => {
    const s = await sellerWithEarnings(app, 1200); // 1080 earned
    const headers = { 'idempotency-key': 'cash-1' };
    const a = await app.api.ok('request_cashout', { amountGas: 500 }, s.apiKey, headers);
    const b = await app.api.ok('request_cashout', { amountGas: 500 }, s.apiKey, headers);
    expect(b.cashout.id).toBe(a.cashout.id);
    expect(await balanceOf(app, s.agent.id)).toBe(580);
  });

  it('rejects bad operator input without changing anything', async () => {
    const s = await sellerWithEarnings(app);
    const { cashout } = await app.api.ok('request_cashout', {}, s.apiKey);
    await expect(app.call('payments.markPayoutPaid', { cashoutId: cashout.id, btcTxid: 'nothex', btcAmount: '0.005' }, operator)).rejects.toMatchObject({ type: 'invalid_arguments' });
    await expect(app.call('payments.markPayoutPaid', { cashoutId: cashout.id, btcTxid: TXID, btcAmount: '0.000000001' }, operator)).rejects.toMatchObject({ type: 'invalid_arguments' });
    await expect(app.call('payments.markPayoutPaid', { cashoutId: cashout.id, btcTxid: TXID, btcAmount: '-1' }, operator)).rejects.toMatchObject({ type: 'invalid_arguments' });
    await expect(app.call('payments.markPayoutPaid', { cashoutId: 'csh_nope', btcTxid: TXID, btcAmount: '0.005' }, operator)).rejects.toMatchObject({ type: 'not_found' });
    // Not an operator (no meta.operator / meta.internal): refused.
    await expect(app.call('payments.markPayoutPaid', { cashoutId: cashout.id, btcTxid: TXID, btcAmount: '0.005' })).rejects.toMatchObject({ type: 'forbidden' });
    await expect(app.call('payments.rejectPayout', { cashoutId: cashout.id, reason: 'no reason' })).rejects.toMatchObject({ type: 'forbidden' });
    await expect(app.call('payments.listPayouts', {})).rejects.toMatchObject({ type: 'forbidden' });
    expect((await app.call('payments.getPayout', { cashoutId: cashout.id }, operator)).status).toBe('pending');
  });
});

describe('recovery: a cash-out left midway is finished by the sweeper', () => {
  it('a requested row whose request died gets its keyed ledger debit and becomes pending', async () => {
    const s = await sellerWithEarnings(app);
    const db = (app.broker.getLocalService('payments') as any).db;
    // As if the process died right after writing the row, before calling the ledger.
    await db.query(
      `INSERT INTO payments.cashouts (id, agent_id, amount_gas, fee_gas, net_gas, btc_address, btc_network, status, created_at, updated_at)
       VALUES ('csh_crashed1', $1, 540, 11, 529, $2, 'mainnet', 'requested', now() - interval '5 minutes', now() - interval '5 minutes')`,
      [s.agent.id, MAINNET_ADDRESS],
    );
    await app.call('payments.sweepCashouts');
    expect((await app.call('payments.getPayout', { cashoutId: 'csh_crashed1' }, operator)).status).toBe('pending');
    expect(await balanceOf(app, s.agent.id)).toBe(0);
    // Sweeping again changes nothing (the ledger key makes the debit happen once).
    await app.call('payments.sweepCashouts');
    expect(await balanceOf(app, s.agent.id)).toBe(0);
  });

  it('a requested row the ledger refuses becomes failed and is not shown to the agent', async () => {
    const s = await sellerWithEarnings(app);
    const db = (app.broker.getLocalService('payments') as any).db;
    await db.query(
      `INSERT INTO payments.cashouts (id, agent_id, amount_gas, fee_gas, net_gas, btc_address, btc_network, status, created_at, updated_at)
       VALUES ('csh_crashed2', $1, 5000, 100, 4900, $2, 'mainnet', 'requested', now() - interval '5 minutes', now() - interval '5 minutes')`,
      [s.agent.id, MAINNET_ADDRESS],
    );
    await app.call('payments.sweepCashouts');
    expect((await app.call('payments.getPayout', { cashoutId: 'csh_crashed2' }, operator)).status).toBe('failed');
    expect(await balanceOf(app, s.agent.id)).toBe(540);
    const list = await app.call<any[]>('payments.listCashouts', { agentId: s.agent.id });
    expect(list.find((c) => c.id === 'csh_crashed2')).toBeUndefined();
  });

  it('a paying claim left midway is completed by the sweeper', async () => {
    const s = await sellerWithEarnings(app);
    const { cashout } = await app.api.ok('request_cashout', {}, s.apiKey);
    const db = (app.broker.getLocalService('payments') as any).db;
    await db.query(
      `UPDATE payments.cashouts SET status = 'paying', btc_txid = $2, btc_amount_sats = 529000, updated_at = now() - interval '5 minutes' WHERE id = $1`,
      [cashout.id, TXID],
    );
    await app.call('payments.sweepCashouts');
    expect((await app.call('payments.getPayout', { cashoutId: cashout.id }, operator)).status).toBe('paid');
  });
});

describe('completeSale helper sanity', () => {
  it('a 600 sale earns the seller 540 sale_earn', async () => {
    const s = await app.api.register('Sanity');
    await completeSale(app, s.agent.id, 600);
    expect(await withdrawableOf(app, s.agent.id)).toBe(540);
  });
});
