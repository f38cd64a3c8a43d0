/** Shared set-up for the escrow suites: agents with gas, a listing that passes the quality gate, audit checks. */
import { base62 } from '../../../packages/ids';
import type { ApiClient, TestApp } from '../../../test/kit';
import { creditGas } from '../../../test/kit/ledger';

export interface TestAgent {
  id: string;
  apiKey: string;
}

export async function newAgent(app: { api: ApiClient }, name = 'Agent', extra: Record<string, unknown> = {}): Promise<TestAgent> {
  const r = await app.api.register(`${name} ${base62(4)}`, extra);
  return { id: r.agent.id, apiKey: r.apiKey };
}

export const LISTING_DESCRIPTION =
  'Send me the path of a TypeScript module and a short note on its public functions. I deliver a Jest test file with ten or more unit tests covering edge cases, plus a short Markdown coverage summary.';

export async function newListing(
  app: { api: ApiClient },
  seller: TestAgent,
  extra: Record<string, unknown> = {},
): Promise<{ id: string; priceGas: number }> {
  const r = await app.api.ok(
    'list_service',
    { title: 'Write Jest unit tests for a TypeScript module', description: LISTING_DESCRIPTION, priceGas: 250, category: 'codegen', ...extra },
    seller.apiKey,
  );
  return { id: r.listing.id, priceGas: r.listing.priceGas };
}

export async function wallet(app: { api: ApiClient }, agent: TestAgent): Promise<{ gasBalance: number; heldGas: number; lifetimeEarnedGas: number }> {
  return app.api.ok('wallet', {}, agent.apiKey);
}

export interface Scenario {
  buyer: TestAgent;
  seller: TestAgent;
  listingId: string;
  priceGas: number;
  fundedGas: number;
}

/** A seller with a 250-gas listing and a buyer with `fundedGas` gas. */
export async function scenario(app: TestApp, opts: { fundedGas?: number; listing?: Record<string, unknown>; buyerExtra?: Record<string, unknown> } = {}): Promise<Scenario> {
  const [seller, buyer] = await Promise.all([newAgent(app, 'Seller'), newAgent(app, 'Buyer', opts.buyerExtra)]);
  const fundedGas = opts.fundedGas ?? 1000;
  if (fundedGas > 0) await creditGas(app, buyer.id, fundedGas);
  const listing = await newListing(app, seller, opts.listing);
  return { buyer, seller, listingId: listing.id, priceGas: listing.priceGas, fundedGas };
}

/**
 * No gas created or lost between the two parties and the platform: the buyer's balance + held gas +
 * the seller's balance + the platform fees of the completed purchases equal what the buyer was funded.
 */
export async function gasAddsUp(app: TestApp, s: Scenario): Promise<void> {
  const [b, sel] = await Promise.all([wallet(app, s.buyer), wallet(app, s.seller)]);
  const { purchases } = await app.api.ok('list_orders', { role: 'buyer', limit: 100 }, s.buyer.apiKey);
  const fees = purchases.filter((p: any) => p.status === 'completed').reduce((sum: number, p: any) => sum + p.platformFeeGas, 0);
  const earned = purchases.filter((p: any) => p.status === 'completed').reduce((sum: number, p: any) => sum + p.sellerNetGas, 0);
  const held = purchases.filter((p: any) => ['awaiting_delivery', 'delivered', 'disputed'].includes(p.status)).reduce((sum: number, p: any) => sum + p.priceGas, 0);
  expect(b.gasBalance).toBeGreaterThanOrEqual(0);
  expect(b.heldGas).toBe(held);
  expect(sel.gasBalance).toBe(earned);
  expect(b.gasBalance + b.heldGas + sel.gasBalance + fees).toBe(s.fundedGas);
}
