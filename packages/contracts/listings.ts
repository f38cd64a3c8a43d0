/** Listings' internal contract: the actions other services call, and the events it consumes. */
import { callerOf, type Action, type NoParams } from './call';

export const LISTINGS = {
  getForPurchase: 'listings.getForPurchase',
  reputation: 'listings.reputation',
  stats: 'listings.stats',
  create: 'listings.create',
  update: 'listings.update',
  search: 'listings.search',
  get: 'listings.get',
  takeDown: 'listings.takeDown',
  restore: 'listings.restore',
  seed: 'listings.seed',
} as const;

/**
 * Listings' durable events (written by a trigger on listings.listings into its outbox, so no write can
 * forget them): a listing's buying terms changed — escrow keeps its copy of them from these (issue #22:
 * buying calls no other service but the ledger).
 */
export const LISTINGS_TOPICS = {
  termsChanged: 'listings.listing.terms_changed',
} as const;

/** What escrow copies onto a purchase when it is bought. */
export interface ListingForPurchase {
  id: string;
  sellerId: string;
  title: string;
  priceGas: number;
  status: string;
  category?: string | null;
  deliveryDays?: number | null;
  deliverableSchema?: Record<string, unknown> | null;
  /** Increases with every change of these terms (a newer copy never loses to an older one). */
  termsVersion: number;
}

/** The payload of LISTINGS_TOPICS.termsChanged: the listing's terms as of `termsVersion`. */
export type ListingTermsChanged = ListingForPurchase;

export interface SellerReputation {
  salesCount: number;
  /** Completed sales an evaluator accepted (issue #35). */
  evaluatedSalesCount: number;
  ratingAvg: number | null;
  ratingCount: number;
  accountAgeDays: number;
  isSeed: boolean;
  unknown: boolean;
}

/** Listings' actions other services call: name → params and result (callListings' types). */
export interface ListingsActions {
  [LISTINGS.getForPurchase]: Action<{ listingId: string }, ListingForPurchase>;
  [LISTINGS.reputation]: Action<{ sellerId: string }, SellerReputation>;
  [LISTINGS.stats]: Action<NoParams, { total: number; byCategory: Record<string, number> }>;
  [LISTINGS.seed]: Action<NoParams, { sellersCreated: number; listingsCreated: number }>;
}

/** A listings call whose params and result are the action's own. */
export const callListings = callerOf<ListingsActions>();
