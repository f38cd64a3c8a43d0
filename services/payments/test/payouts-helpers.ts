/** Shared by the payouts and admin tests: real agents, real ledger movements, real audit. */
import { base62 } from '../../../packages/ids';
import { saleSplit } from '../../../packages/market-rules';
import { eventually, type TestApp } from '../../../test/kit';
import { creditGas } from '../../../test/kit/ledger';

export const MAINNET_ADDRESS = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';
export const MAINNET_ADDRESS_2 = '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2';
export const TESTNET_ADDRESS = 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx';
/** MAINNET_ADDRESS with its last character changed: the bech32 checksum fails. */
export const BAD_CHECKSUM_ADDRESS = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdx';
export const TXID = 'a1'.repeat(32);

/**
 * A completed sale of priceGas to sellerId: a fresh buyer buys the gas, the ledger holds it and settles it,
 * so the seller gets a genuine sale_earn of 90% (600 → 540). Uses ledger actions directly (the escrow flow is
 * exercised by escrow's own tests); returns the purchase id.
 */
export async function completeSale(app: TestApp, sellerId: string, priceGas: number): Promise<string> {
  const buyer = await app.api.register(`Buyer ${base62(4)}`);
  await creditGas(app, buyer.agent.id, priceGas);
  const purchaseId = `pur_test${base62(12)}`;
  await app.call('ledger.hold', { key: `purchase:${purchaseId}:hold`, purchaseId, buyerId: buyer.agent.id, sellerId, amountGas: priceGas });
  await app.call('ledger.settle', { key: `purchase:${purchaseId}:settle`, purchaseId });
  return purchaseId;
}

const LISTING_DESCRIPTION =
  'Send me the path of a TypeScript module and a short note on its public functions. I deliver a Jest test file with ten or more unit tests covering edge cases, plus a short Markdown coverage summary.';

/** A listing of the seller at priceGas, through list_service (the quality gate runs). */
export async function listService(app: TestApp, sellerKey: string, priceGas: number): Promise<string> {
  const r = await app.api.ok(
    'list_service',
    { title: 'Write Jest unit tests for a TypeScript module', description: LISTING_DESCRIPTION, priceGas, category: 'codegen' },
    sellerKey,
  );
  return r.listing.id;
}

/** A fresh buyer with exactly priceGas bought gas purchases the listing (gas held in escrow); returns both. */
export async function buyListing(app: TestApp, listingId: string, priceGas: number) {
  const buyer = await app.api.register(`Buyer ${base62(4)}`);
  await creditGas(app, buyer.agent.id, priceGas);
  const { purchase } = await app.api.ok('purchase_service', { listingId }, buyer.apiKey);
  return { buyer, purchaseId: purchase.id as string };
}

/**
 * The real flow: list → a buyer buys gas → purchase_service → deliver_work → confirm_delivery; waits until the
 * ledger has settled it, so the seller holds a genuine sale_earn of 90% of priceGas (600 → 540).
 */
export async function earnThroughEscrow(
  app: TestApp,
  seller: { apiKey: string; agent: { id: string } },
  priceGas: number,
): Promise<{ listingId: string; purchaseId: string }> {
  const before = (await app.call<{ lifetimeEarnedGas: number }>('ledger.withdrawable', { agentId: seller.agent.id })).lifetimeEarnedGas;
  const listingId = await listService(app, seller.apiKey, priceGas);
  const { buyer, purchaseId } = await buyListing(app, listingId, priceGas);
  await app.api.ok('deliver_work', { purchaseId, delivery: { summary: 'Tests written', files: ['a.test.ts'] } }, seller.apiKey);
  await app.api.ok('confirm_delivery', { purchaseId }, buyer.apiKey);
  const expected = before + saleSplit(priceGas).sellerNetGas;
  await eventually(async () => (await app.call<{ lifetimeEarnedGas: number }>('ledger.withdrawable', { agentId: seller.agent.id })).lifetimeEarnedGas === expected);
  return { listingId, purchaseId };
}

export async function balanceOf(app: TestApp, agentId: string): Promise<number> {
  return (await app.call<{ gasBalance: number }>('ledger.balance', { agentId })).gasBalance;
}

export async function withdrawableOf(app: TestApp, agentId: string): Promise<number> {
  return (await app.call<{ withdrawableGas: number }>('ledger.withdrawable', { agentId })).withdrawableGas;
}

/** A seller with sale earnings of priceGas×90% and a connected mainnet address. */
export async function sellerWithEarnings(app: TestApp, priceGas = 600, address: string | null = MAINNET_ADDRESS) {
  const seller = await app.api.register(`Seller ${base62(4)}`);
  const { listingId } = await earnThroughEscrow(app, seller, priceGas);
  if (address) await app.api.ok('connect_payouts', { btcAddress: address }, seller.apiKey);
  return { ...seller, listingId };
}
