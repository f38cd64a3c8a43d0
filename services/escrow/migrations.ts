import type { Migration } from '../../packages/db';
import { outboxTablesSql } from '../../packages/outbox';

export const migrations: Migration[] = [
  {
    version: 1,
    name: 'purchases',
    sql: `
      CREATE TABLE escrow.purchases (
        id text PRIMARY KEY,
        listing_id text NOT NULL,
        listing_title text NOT NULL,
        category text,
        buyer_id text NOT NULL,
        seller_id text NOT NULL CHECK (seller_id <> buyer_id),
        price_gas integer NOT NULL CHECK (price_gas > 0),
        platform_fee_gas integer NOT NULL CHECK (platform_fee_gas >= 0),
        seller_net_gas integer NOT NULL CHECK (seller_net_gas >= 0),
        status text NOT NULL CHECK (status IN ('pending', 'awaiting_delivery', 'delivered', 'completed', 'refunded', 'disputed', 'failed')),
        requirements jsonb,
        delivery_days integer NOT NULL CHECK (delivery_days BETWEEN 1 AND 365),
        deliverable_schema jsonb,
        idempotency_key text,
        failure_reason text,
        hold_attempts integer NOT NULL DEFAULT 0,
        hold_checked_at timestamptz,
        referral_checked boolean NOT NULL DEFAULT false,
        acknowledged_at timestamptz,
        delivered_at timestamptz,
        delivery_json text,
        delivery_sha256 text,
        auto_release_at timestamptz,
        deliver_by timestamptz,
        completed_at timestamptz,
        completed_by text,
        refunded_at timestamptz,
        refunded_by text,
        refund_requested_at timestamptz,
        refund_reason text,
        disputed_at timestamptz,
        disputed_by text,
        dispute_reason text,
        dispute_resolved_at timestamptz,
        dispute_outcome text CHECK (dispute_outcome IN ('refund', 'release')),
        dispute_note text,
        dispute_resolved_by text,
        rating smallint CHECK (rating BETWEEN 1 AND 5),
        rating_comment text,
        first_rated_at timestamptz,
        rated_at timestamptz,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        CHECK (platform_fee_gas + seller_net_gas = price_gas),
        CHECK (status <> 'delivered' OR (delivered_at IS NOT NULL AND delivery_sha256 IS NOT NULL)),
        CHECK (status <> 'completed' OR completed_at IS NOT NULL),
        CHECK (status <> 'refunded' OR refunded_at IS NOT NULL),
        CHECK (rating IS NULL OR status = 'completed')
      );
      -- Same agent + Idempotency-Key → the same purchase, even if the gateway's own record is lost.
      CREATE UNIQUE INDEX purchases_buyer_idempotency ON escrow.purchases (buyer_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
      CREATE INDEX purchases_buyer ON escrow.purchases (buyer_id, created_at DESC, id DESC);
      CREATE INDEX purchases_seller ON escrow.purchases (seller_id, created_at DESC, id DESC);
      CREATE INDEX purchases_auto_release ON escrow.purchases (auto_release_at) WHERE status = 'delivered';
      CREATE INDEX purchases_deliver_by ON escrow.purchases (deliver_by) WHERE status = 'awaiting_delivery';
      CREATE INDEX purchases_pending ON escrow.purchases (created_at) WHERE status = 'pending';
      CREATE INDEX purchases_referral_unchecked ON escrow.purchases (created_at) WHERE NOT referral_checked;
      CREATE INDEX purchases_created ON escrow.purchases (created_at);

      CREATE TABLE escrow.messages (
        seq bigserial PRIMARY KEY,
        id text NOT NULL UNIQUE,
        purchase_id text NOT NULL REFERENCES escrow.purchases (id),
        sender_id text NOT NULL,
        sender_role text NOT NULL CHECK (sender_role IN ('buyer', 'seller')),
        body text NOT NULL CHECK (char_length(body) BETWEEN 1 AND 4000),
        created_at timestamptz NOT NULL
      );
      CREATE INDEX messages_purchase ON escrow.messages (purchase_id, seq);

      -- One row per buyer once their first funded purchase was checked for a referrer:
      -- the referral is qualified at most once per referred agent.
      CREATE TABLE escrow.referral_checks (
        buyer_id text PRIMARY KEY,
        referrer_id text,
        purchase_id text NOT NULL,
        checked_at timestamptz NOT NULL
      );

      ${outboxTablesSql('escrow')}
    `,
  },
];
