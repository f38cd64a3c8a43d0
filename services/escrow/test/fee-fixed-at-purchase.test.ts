/**
 * The split is fixed when quoted (DESIGN §3/§4): a purchase bought at PLATFORM_FEE_PERCENT=10 and
 * confirmed after a restart at 20 pays the seller 90 %, exactly as quoted; a purchase bought after
 * the change pays 80 %. Same embedded database across the restart (PGlite in a temp DATA_DIR).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../../packages/config';
import { startTestApp, type TestApp } from '../../../test/kit';
import { creditGas, expectLedgerClean } from '../../../test/kit/ledger';
import { newAgent, newListing, wallet, type TestAgent } from './helpers';

describe('the platform fee is fixed when a purchase is quoted', () => {
  let dataDir: string;
  let app: TestApp | null = null;
  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fee-fixed-'));
  });
  afterAll(async () => {
    await app?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('a purchase made at 10 % and confirmed after a restart at 20 % pays the seller 90 %', async () => {
    app = await startTestApp({ env: { DATA_DIR: dataDir, PLATFORM_FEE_PERCENT: '10' } });
    const seller: TestAgent = await newAgent(app, 'Seller');
    const buyer: TestAgent = await newAgent(app, 'Buyer');
    await creditGas(app, buyer.id, 1000);
    const listing = await newListing(app, seller, { priceGas: 250 });
    const before = (await app.api.ok('purchase_service', { listingId: listing.id }, buyer.apiKey)).purchase;
    expect(before).toMatchObject({ priceGas: 250, platformFeeGas: 25, sellerNetGas: 225, status: 'awaiting_delivery' });
    await app.api.ok('deliver_work', { purchaseId: before.id, delivery: { summary: 'tests written' } }, seller.apiKey);
    expect((await wallet(app, seller)) as any).toMatchObject({ pendingEarningsGas: 225 });
    await app.stop();
    app = null;

    // The operator raises the fee; the open purchase keeps the split it was bought with.
    app = await startTestApp({ env: { DATA_DIR: dataDir, PLATFORM_FEE_PERCENT: '20' } });
    const search = await app.api.ok('search_services', { sellerId: seller.id }, buyer.apiKey);
    expect(search.listings[0].quote).toMatchObject({ priceGas: 250, platformFeeGas: 50, sellerNetGas: 200 });
    expect((await wallet(app, seller)) as any).toMatchObject({ pendingEarningsGas: 225 });
    const confirmed = (await app.api.ok('confirm_delivery', { purchaseId: before.id }, buyer.apiKey)).purchase;
    expect(confirmed).toMatchObject({ status: 'completed', platformFeeGas: 25, sellerNetGas: 225 });
    const sellerAfterOld = await wallet(app, seller);
    expect(sellerAfterOld.gasBalance).toBe(225);

    // What agents read says 20 % too: the public info, llms.txt and ask_help.
    const info = (await (await fetch(`${app.baseUrl}/api/public/info`)).json()) as any;
    expect(info.gas.platformFeePercent).toBe(20);
    expect(await (await fetch(`${app.baseUrl}/llms.txt`)).text()).toContain('Platform fee 20% at completion');
    expect(await (await fetch(`${app.baseUrl}/terms`)).text()).toContain('The marketplace keeps 20% of each completed sale');
    expect((await app.api.ok('ask_help', { question: 'What fee does the platform take on a sale?' }, seller.apiKey)).answer).toContain('20%');

    // A purchase bought now is quoted, held and settled at 20 %.
    const after = (await app.api.ok('purchase_service', { listingId: listing.id }, buyer.apiKey)).purchase;
    expect(after).toMatchObject({ priceGas: 250, platformFeeGas: 50, sellerNetGas: 200 });
    await app.api.ok('deliver_work', { purchaseId: after.id, delivery: { summary: 'more tests' } }, seller.apiKey);
    await app.api.ok('confirm_delivery', { purchaseId: after.id }, buyer.apiKey);
    const sellerFinal = (await wallet(app, seller)) as any;
    expect(sellerFinal.gasBalance).toBe(425);
    const fees = sellerFinal.entries.filter((e: any) => e.type === 'sale_earn').map((e: any) => [e.purchaseId, e.amountGas]);
    expect(fees).toEqual([
      [after.id, 200],
      [before.id, 225],
    ]);
    process.stdout.write(
      `fee fixed at purchase: bought at 10 % → seller ${confirmed.sellerNetGas}/${confirmed.priceGas} after restart at 20 %; ` +
        `bought at 20 % → seller ${after.sellerNetGas}/${after.priceGas}; seller balance ${sellerFinal.gasBalance}\n`,
    );
    await expectLedgerClean(app);
  }, 240_000);

  it('PLATFORM_FEE_PERCENT is read and validated in packages/config (default 10, 0–50)', () => {
    expect(loadConfig({}).platformFeePercent).toBe(10);
    expect(loadConfig({ PLATFORM_FEE_PERCENT: '0' }).platformFeePercent).toBe(0);
    for (const bad of ['51', '-1', '7.5', 'ten']) expect(() => loadConfig({ PLATFORM_FEE_PERCENT: bad })).toThrow(ConfigError);
  });
});
