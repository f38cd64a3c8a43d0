/**
 * The account situations an ask_help question set describes (`setup`), built for real on a whole
 * marketplace (test/kit): registered agents, a listing, gas credited through the ledger, a purchase,
 * a delivery, a dispute, an open checkout, limits set by the owner. Used by help-eval and help-examples.
 */
import { creditGas } from '../test/kit/ledger';
import type { TestApp } from '../test/kit';
import { ESCROW } from '../packages/contracts/escrow';
// The listing every setup's seller offers: the one the support suite lists.
import { LISTING } from '../services/support/test/helpers';

export { LISTING };

export const SETUPS = ['none', 'buyer_paid', 'buyer_delivered', 'seller_paid', 'seller_delivered', 'disputed', 'seller_disputed', 'open_checkout', 'spending_limit'] as const;
export type Setup = (typeof SETUPS)[number];
/** Older sets' names for the same situations. */
const ALIASES: Record<string, Setup> = { buyer_pending: 'buyer_paid', seller_pending: 'seller_paid', buyer_limits: 'spending_limit' };

let counter = 0;

export interface Built {
  apiKey: string;
  agentId: string;
  /** The purchase of the situation, if any. */
  purchaseId: string | null;
  /** The other party's key (to act as it in a walk). */
  otherKey: string | null;
}

async function register(app: TestApp, name: string) {
  const r = await app.api.register(`${name} ${++counter}`);
  return { id: r.agent.id as string, apiKey: r.apiKey as string };
}

export async function buildSetup(app: TestApp, setupName: string | undefined): Promise<Built> {
  const setup: Setup = ALIASES[setupName ?? ''] ?? ((setupName ?? 'none') as Setup);
  if (!SETUPS.includes(setup)) throw new Error(`unknown setup ${setupName}; known: ${SETUPS.join(', ')}`);
  const me = await register(app, 'Asker');
  const base = { apiKey: me.apiKey, agentId: me.id, purchaseId: null, otherKey: null };
  if (setup === 'none') return base;
  if (setup === 'spending_limit') {
    await creditGas(app, me.id, 3000, 'builder');
    await app.call(ESCROW.setLimits, { agentId: me.id, limits: { perPurchaseMaxGas: 500 } });
    return base;
  }
  if (setup === 'open_checkout') {
    await app.api.ok('buy_gas', { packId: 'starter' }, me.apiKey, { 'idempotency-key': `setup-co-${counter}` });
    return base;
  }
  const other = await register(app, 'Counterparty');
  const iAmBuyer = setup.startsWith('buyer') || setup === 'disputed';
  const [buyer, seller] = iAmBuyer ? [me, other] : [other, me];
  const { listing } = await app.api.ok('list_service', LISTING, seller.apiKey);
  await creditGas(app, buyer.id, 500);
  const { purchase } = await app.api.ok('purchase_service', { listingId: listing.id, requirements: 'src/parser.ts', maxPriceGas: LISTING.priceGas }, buyer.apiKey, {
    'idempotency-key': `setup-${counter}`,
  });
  if (setup.endsWith('delivered') || setup.endsWith('disputed')) {
    await app.api.ok('deliver_work', { purchaseId: purchase.id, delivery: { summary: 'Added 14 Jest tests for parser.ts; coverage summary attached.' } }, seller.apiKey);
  }
  if (setup.endsWith('disputed')) {
    await app.api.ok('dispute_purchase', { purchaseId: purchase.id, reason: 'The tests do not run: half of them import files that do not exist.' }, buyer.apiKey);
  }
  return { ...base, purchaseId: purchase.id, otherKey: other.apiKey };
}
