/** Listings' internal contract: the actions other services call, and the events it consumes. */
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
}

export interface SellerReputation {
  salesCount: number;
  ratingAvg: number | null;
  ratingCount: number;
  accountAgeDays: number;
  isSeed: boolean;
  unknown: boolean;
}
