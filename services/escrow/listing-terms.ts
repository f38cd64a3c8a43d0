/**
 * Issue #22, "state carried by events": escrow keeps a copy of every listing's buying terms (seller, title,
 * price, status, category, delivery days, deliverable schema) from listings' durable `terms_changed` events,
 * so a purchase reads them from its own schema instead of calling listings. Each copy carries the listing's
 * terms version: an older event never overwrites a newer copy.
 *
 * A copy is used only while it is fresh (refreshed by an event or a read within TERMS_FRESH_MS); a listing
 * escrow has not heard of, or whose copy is older, is asked of listings (the call every purchase made before)
 * and the answer stored. So a lost or delayed event costs one call, never a purchase on terms older than
 * that. Decision and its consistency window: docs/adr/0003-each-service-owns-its-data.md.
 */
import type { Service, ServiceBroker } from 'moleculer';
import { callListings, LISTINGS, LISTINGS_TOPICS, type ListingForPurchase, type ListingTermsChanged } from '../../packages/contracts/listings';
import type { Db, Queryable } from '../../packages/db';
import type { OutboxEvent } from '../../packages/outbox';
import { Recent } from './recent';

/** How long a copy is trusted without news from listings. */
export const TERMS_FRESH_MS = 10_000;

/** SQL for escrow's migration. */
export const LISTING_TERMS_SQL = `
  CREATE TABLE escrow.listing_terms (
    listing_id text PRIMARY KEY,
    seller_id text NOT NULL,
    title text NOT NULL,
    price_gas integer NOT NULL,
    status text NOT NULL,
    category text,
    delivery_days integer,
    deliverable_schema jsonb,
    terms_version bigint NOT NULL,
    refreshed_at timestamptz NOT NULL
  );
`;

interface TermsRow {
  listing_id: string;
  seller_id: string;
  title: string;
  price_gas: number;
  status: string;
  category: string | null;
  delivery_days: number | null;
  deliverable_schema: Record<string, unknown> | null;
  terms_version: string;
}

/** Stores `terms` as of `at` unless a newer version is already there (a same version only refreshes it). */
async function storeTerms(db: Queryable, terms: ListingForPurchase, at: Date): Promise<void> {
  await db.query(
    `INSERT INTO escrow.listing_terms (listing_id, seller_id, title, price_gas, status, category, delivery_days, deliverable_schema, terms_version, refreshed_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (listing_id) DO UPDATE SET seller_id = EXCLUDED.seller_id, title = EXCLUDED.title, price_gas = EXCLUDED.price_gas,
       status = EXCLUDED.status, category = EXCLUDED.category, delivery_days = EXCLUDED.delivery_days,
       deliverable_schema = EXCLUDED.deliverable_schema, terms_version = EXCLUDED.terms_version, refreshed_at = EXCLUDED.refreshed_at
     WHERE escrow.listing_terms.terms_version <= EXCLUDED.terms_version`,
    [
      terms.id,
      terms.sellerId,
      terms.title,
      terms.priceGas,
      terms.status,
      terms.category ?? null,
      terms.deliveryDays ?? null,
      terms.deliverableSchema ? JSON.stringify(terms.deliverableSchema) : null,
      terms.termsVersion,
      at.toISOString(),
    ],
  );
}

/** The oldest news a copy may have to be used at `now` (ISO, for a query parameter). */
export function freshSince(now: Date): string {
  return new Date(now.getTime() - TERMS_FRESH_MS).toISOString();
}

/** A listing's terms for a purchase: escrow's fresh copy, else listings' answer (stored for the next buyer). */
export async function listingTerms(db: Db, broker: ServiceBroker, listingId: string, now: Date): Promise<ListingForPurchase> {
  const r = await db.query<TermsRow>(`SELECT * FROM escrow.listing_terms WHERE listing_id = $1 AND refreshed_at > $2`, [listingId, freshSince(now)]);
  const copy = r.rows[0];
  if (copy) {
    return {
      id: copy.listing_id,
      sellerId: copy.seller_id,
      title: copy.title,
      priceGas: Number(copy.price_gas),
      status: copy.status,
      category: copy.category,
      deliveryDays: copy.delivery_days,
      deliverableSchema: copy.deliverable_schema,
      termsVersion: Number(copy.terms_version),
    };
  }
  const asked = await callListings(broker, LISTINGS.getForPurchase, { listingId });
  await storeTerms(db, asked, now);
  return asked;
}

/**
 * The terms this process read last, per listing. Only a guess: a purchase on a guess inserts only if
 * escrow's copy still has the guessed version and is fresh (the check is in the insert).
 */
export class TermsGuesses extends Recent<ListingForPurchase> {
  constructor() {
    super(5_000);
  }
}

/** Escrow's `channels` for listings' events (read by the durable-events middleware). */
export const listingTermsChannels = {
  [LISTINGS_TOPICS.termsChanged]: {
    group: 'escrow',
    // Idempotent and order-proof without an inbox: the version decides.
    async handler(this: Service & { db: Db; now(): Date }, event: OutboxEvent<ListingTermsChanged>) {
      await storeTerms(this.db, event.data, this.now());
    },
  },
};
