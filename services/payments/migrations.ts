/**
 * payments' schema: checkout sessions (sandbox or Stripe) and the Stripe events received.
 * The cash-out issue appends the payouts tables here as versions 100+ (checkout keeps 1–99).
 */
import type { Migration } from '../../packages/db';
import { outboxTablesSql } from '../../packages/outbox';

export const migrations: Migration[] = [
  {
    version: 1,
    name: 'checkout sessions and stripe events',
    sql: `
      -- open → paid (payment confirmed by Stripe or the sandbox) → completed (gas credited);
      -- open → declined (sandbox) | expired. The ledger credit is keyed checkout:<id>, so it happens once.
      CREATE TABLE payments.checkout_sessions (
        id text PRIMARY KEY,
        provider text NOT NULL CHECK (provider IN ('sandbox', 'stripe')),
        agent_id text NOT NULL,
        pack_id text NOT NULL,
        gas integer NOT NULL CHECK (gas > 0),
        usd_cents integer NOT NULL CHECK (usd_cents > 0),
        status text NOT NULL CHECK (status IN ('open', 'paid', 'completed', 'declined', 'expired')),
        checkout_url text NOT NULL,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL,
        paid_at timestamptz,
        completed_at timestamptz,
        ledger_transaction_id text,
        checked_at timestamptz
      );
      CREATE INDEX checkout_sessions_agent_open ON payments.checkout_sessions (agent_id) WHERE status IN ('open', 'paid');
      CREATE INDEX checkout_sessions_open ON payments.checkout_sessions (checked_at) WHERE status IN ('open', 'paid');

      CREATE TABLE payments.stripe_events (
        event_id text PRIMARY KEY,
        type text NOT NULL,
        session_id text,
        outcome text NOT NULL,
        received_at timestamptz NOT NULL DEFAULT now()
      );
    `,
  },
  {
    version: 2,
    name: 'the owner-claim secret of a Stripe checkout (issue #39)',
    sql: `
      -- sha256 of the one-time secret in the Stripe session's success_url: only the browser Stripe sends
      -- there after paying (the payer's) can claim the owner link. NULL for sandbox sessions.
      ALTER TABLE payments.checkout_sessions ADD COLUMN owner_claim_sha256 text;
    `,
  },
  // ---- payouts (services/payments/payouts.ts, the cash-out issue): versions 100+ so the two never collide. ----
  {
    version: 100,
    name: 'payout addresses and cash-outs',
    sql: `
      CREATE TABLE payments.payout_addresses (
        agent_id text PRIMARY KEY,
        btc_address text NOT NULL,
        btc_network text NOT NULL CHECK (btc_network IN ('mainnet', 'testnet')),
        address_type text NOT NULL,
        connected_at timestamptz NOT NULL DEFAULT now()
      );
      -- Every connect/replace, append-only.
      CREATE TABLE payments.payout_address_history (
        id bigserial PRIMARY KEY,
        agent_id text NOT NULL,
        btc_address text NOT NULL,
        btc_network text NOT NULL,
        address_type text NOT NULL,
        previous_address text,
        request_id text,
        connected_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX payout_address_history_agent ON payments.payout_address_history (agent_id, id);

      -- requested → pending (ledger debited) | failed (ledger refused);
      -- pending → paying → paid; pending → rejecting → rejected (gas returned).
      CREATE TABLE payments.cashouts (
        id text PRIMARY KEY,
        agent_id text NOT NULL,
        amount_gas integer NOT NULL CHECK (amount_gas > 0),
        fee_gas integer NOT NULL CHECK (fee_gas >= 0),
        net_gas integer NOT NULL CHECK (net_gas > 0),
        btc_address text NOT NULL,
        btc_network text NOT NULL,
        status text NOT NULL CHECK (status IN ('requested', 'pending', 'paying', 'paid', 'rejecting', 'rejected', 'failed')),
        request_key text,
        failure_reason text,
        btc_txid text CHECK (btc_txid IS NULL OR btc_txid ~ '^[0-9a-f]{64}$'),
        btc_amount_sats bigint CHECK (btc_amount_sats IS NULL OR btc_amount_sats > 0),
        reject_reason text,
        operator text,
        sweep_claimed_until timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        paid_at timestamptz,
        rejected_at timestamptz,
        CONSTRAINT cashouts_split CHECK (amount_gas = fee_gas + net_gas),
        CONSTRAINT cashouts_paid_facts CHECK (status NOT IN ('paying', 'paid') OR (btc_txid IS NOT NULL AND btc_amount_sats IS NOT NULL)),
        CONSTRAINT cashouts_reject_reason CHECK (status NOT IN ('rejecting', 'rejected') OR reject_reason IS NOT NULL)
      );
      CREATE UNIQUE INDEX cashouts_request_key ON payments.cashouts (agent_id, request_key) WHERE request_key IS NOT NULL;
      CREATE INDEX cashouts_agent ON payments.cashouts (agent_id, created_at DESC);
      CREATE INDEX cashouts_status ON payments.cashouts (status, created_at);
    `,
  },
  // ---- notifications (issue #18): payments' outbox for gas.credited / cashout.paid / cashout.rejected. ----
  {
    version: 180,
    name: 'outbox for notification events',
    sql: outboxTablesSql('payments'),
  },
];
