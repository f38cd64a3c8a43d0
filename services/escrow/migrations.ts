import type { Migration } from '../../packages/db';
import { outboxTablesSql } from '../../packages/outbox';
import { WEBHOOK_AGENTS_SQL } from './audience';
import { LISTING_TERMS_SQL } from './listing-terms';

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
  {
    version: 2,
    name: 'spending limits, owner links, approval',
    sql: `
      -- Set only by the agent's human (checkout page, owner page); NULL = no such limit.
      CREATE TABLE escrow.spending_limits (
        agent_id text PRIMARY KEY,
        per_purchase_max_gas integer CHECK (per_purchase_max_gas > 0),
        daily_budget_gas integer CHECK (daily_budget_gas >= 0),
        weekly_budget_gas integer CHECK (weekly_budget_gas >= 0),
        allowed_categories text[],
        approval_above_gas integer CHECK (approval_above_gas >= 0),
        updated_at timestamptz NOT NULL
      );
      -- The human's private link to the owner page: only its sha256 is kept.
      CREATE TABLE escrow.owner_links (
        token_sha256 text PRIMARY KEY,
        agent_id text NOT NULL,
        created_at timestamptz NOT NULL,
        revoked_at timestamptz
      );
      CREATE INDEX owner_links_agent ON escrow.owner_links (agent_id);
      -- Limits a human submitted on the page before a Stripe payment: applied (and the owner link given,
      -- to that browser only) once the payment is confirmed.
      CREATE TABLE escrow.checkout_limits (
        session_id text PRIMARY KEY,
        agent_id text NOT NULL,
        limits jsonb,
        browser_sha256 text NOT NULL,
        created_at timestamptz NOT NULL,
        claimed_at timestamptz
      );
      ALTER TABLE escrow.purchases
        ADD COLUMN needs_approval boolean NOT NULL DEFAULT false,
        ADD COLUMN approval_token text UNIQUE,
        ADD COLUMN approval_url text,
        ADD COLUMN approval_expires_at timestamptz,
        ADD COLUMN approval_decided_at timestamptz,
        ADD COLUMN approval_decision text CHECK (approval_decision IN ('approved', 'declined', 'expired'));
      CREATE INDEX purchases_approval_expires ON escrow.purchases (approval_expires_at) WHERE status = 'awaiting_approval';
      CREATE INDEX purchases_buyer_budget ON escrow.purchases (buyer_id, created_at);
    `,
  },
  {
    version: 3,
    name: 'agents with webhooks (issue #22: notices only for them)',
    sql: WEBHOOK_AGENTS_SQL,
  },
  {
    version: 4,
    name: 'a copy of listings\' buying terms (issue #22: buying calls no service but the ledger)',
    sql: LISTING_TERMS_SQL,
  },
  {
    version: 5,
    name: 'a Stripe checkout claimed by a payer who staged no limits (issue #39)',
    // The payer claims the owner link with the secret Stripe returned them with; the browser that
    // submitted the page before paying (if any) only decides whose staged limits apply.
    sql: 'ALTER TABLE escrow.checkout_limits ALTER COLUMN browser_sha256 DROP NOT NULL',
  },
  {
    version: 6,
    name: 'an evaluator checks the delivery (issue #35): its fee is held with the price',
    // The status CHECK follows the machine (syncStatusCheck adds awaiting_evaluation).
    sql: `
      ALTER TABLE escrow.purchases
        ADD COLUMN evaluator_id text,
        ADD COLUMN evaluator_fee_gas integer NOT NULL DEFAULT 0 CHECK (evaluator_fee_gas >= 0),
        ADD COLUMN evaluation_hours integer CHECK (evaluation_hours BETWEEN 1 AND 720),
        ADD COLUMN evaluated_at timestamptz,
        ADD COLUMN evaluation_verdict text CHECK (evaluation_verdict IN ('accept', 'reject')),
        ADD COLUMN evaluation_report text,
        ADD COLUMN evaluation_expired_at timestamptz,
        ADD CONSTRAINT purchases_evaluator_is_third_party CHECK (evaluator_id IS NULL OR (evaluator_id <> buyer_id AND evaluator_id <> seller_id)),
        ADD CONSTRAINT purchases_evaluator_has_fee CHECK ((evaluator_id IS NULL) = (evaluator_fee_gas = 0));
      CREATE INDEX purchases_evaluator ON escrow.purchases (evaluator_id, created_at) WHERE evaluator_id IS NOT NULL;
      ALTER TABLE escrow.messages DROP CONSTRAINT IF EXISTS messages_sender_role_check,
        ADD CONSTRAINT messages_sender_role_check CHECK (sender_role IN ('buyer', 'seller', 'evaluator'));
    `,
  },
  {
    version: 7,
    name: 'timers are data on their transition: one due_at column instead of a column per timer (issue #35)',
    // A state has at most one timer leaving it (purchase-machine.ts, timerOf): due_at is when it fires.
    // The three timer columns are folded into it by state, then dropped.
    sql: `
      ALTER TABLE escrow.purchases ADD COLUMN due_at timestamptz;
      UPDATE escrow.purchases SET due_at = CASE status
        WHEN 'awaiting_approval' THEN approval_expires_at
        WHEN 'awaiting_delivery' THEN deliver_by
        WHEN 'delivered' THEN auto_release_at END;
      DROP INDEX IF EXISTS escrow.purchases_approval_expires;
      ALTER TABLE escrow.purchases DROP COLUMN approval_expires_at, DROP COLUMN deliver_by, DROP COLUMN auto_release_at;
      CREATE INDEX purchases_due ON escrow.purchases (status, due_at) WHERE due_at IS NOT NULL;
    `,
  },
  {
    version: 8,
    name: "the buyer rates the evaluator (issue #35, evaluators' reputation): once per final purchase that had one",
    sql: `
      ALTER TABLE escrow.purchases
        ADD COLUMN evaluator_rating smallint CHECK (evaluator_rating BETWEEN 1 AND 5),
        ADD COLUMN evaluator_rated_at timestamptz,
        ADD CONSTRAINT purchases_evaluator_rating_has_evaluator CHECK (evaluator_rating IS NULL OR evaluator_id IS NOT NULL);
    `,
  },
];
