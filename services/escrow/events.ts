/** The outbox events a purchase's money transitions write (payloads typed in contracts.ts). */
import { ESCROW_TOPICS } from '../../packages/contracts/escrow';
import { STATES, type MoneyEvent } from '../../packages/contracts/purchase-machine';
import type { PurchaseRow } from './purchases';
import type { EscrowEvent } from './types';

export function completedEvent(row: PurchaseRow, completedAt: string): EscrowEvent {
  return [
    ESCROW_TOPICS.completed,
    {
      purchaseId: row.id,
      buyerId: row.buyer_id,
      sellerId: row.seller_id,
      listingId: row.listing_id,
      priceGas: Number(row.price_gas),
      platformFeeGas: Number(row.platform_fee_gas),
      sellerNetGas: Number(row.seller_net_gas),
      completedAt,
    },
  ];
}

export function refundedEvent(row: PurchaseRow, refundedAt: string): EscrowEvent {
  return [
    ESCROW_TOPICS.refunded,
    { purchaseId: row.id, buyerId: row.buyer_id, sellerId: row.seller_id, listingId: row.listing_id, priceGas: Number(row.price_gas), refundedAt, sellerSees: STATES[row.status].sellerSees },
  ];
}

/** A purchase fact for notifications (created, delivered, disputed), in the state it is in now. */
export function noticeEvent(
  topic: typeof ESCROW_TOPICS.created | typeof ESCROW_TOPICS.delivered | typeof ESCROW_TOPICS.disputed,
  row: PurchaseRow,
  at: string,
): EscrowEvent {
  return [
    topic,
    {
      purchaseId: row.id,
      buyerId: row.buyer_id,
      sellerId: row.seller_id,
      listingId: row.listing_id,
      listingTitle: row.listing_title,
      priceGas: Number(row.price_gas),
      status: row.status,
      at,
    },
  ] as EscrowEvent;
}

/** The event a transition's moneyEvent asks for (none for holds: funding is a keyed call). */
export function moneyEvents(moneyEvent: MoneyEvent, row: PurchaseRow, at: string): EscrowEvent[] {
  if (moneyEvent === 'settle') return [completedEvent(row, at)];
  if (moneyEvent === 'void') return [refundedEvent(row, at)];
  return [];
}
