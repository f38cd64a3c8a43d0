/**
 * The ledger's schema. Double-entry: a transaction (unique idempotency key) owns postings that sum
 * to zero (checked at commit by a deferred constraint trigger); agent accounts can never go negative
 * (CHECK); postings and transactions are never updated or deleted (triggers refuse it). Platform
 * accounts' balances are derived from their postings (view ledger.account_balances, migration 3).
 */
import type { Migration } from '../../packages/db';

export const migrations: Migration[] = [
  {
    version: 1,
    name: 'accounts, transactions, postings, holds, cashouts, referrals',
    sql: `
      CREATE TABLE ledger.accounts (
        id text PRIMARY KEY,
        kind text NOT NULL CHECK (kind IN ('agent', 'platform')),
        agent_id text UNIQUE,
        balance bigint NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        -- Only platform source accounts (card_issuance, referral_bonuses) may go negative.
        CONSTRAINT agent_balance_not_negative CHECK (kind <> 'agent' OR balance >= 0),
        CONSTRAINT agent_has_agent_id CHECK ((kind = 'agent') = (agent_id IS NOT NULL))
      );

      INSERT INTO ledger.accounts (id, kind) VALUES
        ('platform:card_issuance', 'platform'),
        ('platform:platform_fees', 'platform'),
        ('platform:escrow_holds', 'platform'),
        ('platform:referral_bonuses', 'platform'),
        ('platform:payouts_pending', 'platform'),
        ('platform:payouts_paid', 'platform');

      CREATE TABLE ledger.transactions (
        id text PRIMARY KEY,
        key text NOT NULL,
        type text NOT NULL,
        fingerprint text NOT NULL,
        purchase_id text,
        session_id text,
        cashout_id text,
        created_at timestamptz NOT NULL,
        CONSTRAINT transactions_key_unique UNIQUE (key)
      );

      CREATE TABLE ledger.postings (
        id bigserial PRIMARY KEY,
        transaction_id text NOT NULL REFERENCES ledger.transactions(id),
        account_id text NOT NULL REFERENCES ledger.accounts(id),
        amount bigint NOT NULL CHECK (amount <> 0),
        entry_type text NOT NULL CHECK (entry_type IN (
          'gas_purchase', 'escrow_hold', 'escrow_refund', 'sale_earn', 'platform_fee',
          'referral_bonus', 'cashout', 'cashout_paid', 'cashout_returned', 'escrow_release')),
        balance_after bigint NOT NULL,
        purchase_id text,
        session_id text,
        cashout_id text,
        created_at timestamptz NOT NULL
      );
      CREATE INDEX postings_account ON ledger.postings (account_id, id DESC);
      CREATE INDEX postings_account_type ON ledger.postings (account_id, entry_type);
      CREATE INDEX postings_transaction ON ledger.postings (transaction_id);

      -- Zero-sum at commit: every transaction touched in this database transaction must balance.
      CREATE FUNCTION ledger.check_transaction_balanced() RETURNS trigger LANGUAGE plpgsql AS $fn$
      DECLARE total bigint;
      BEGIN
        SELECT COALESCE(sum(amount), 0) INTO total FROM ledger.postings WHERE transaction_id = NEW.transaction_id;
        IF total <> 0 THEN
          RAISE EXCEPTION 'ledger transaction % does not balance (sum %)', NEW.transaction_id, total
            USING ERRCODE = '23514';
        END IF;
        RETURN NULL;
      END $fn$;
      CREATE CONSTRAINT TRIGGER postings_balanced AFTER INSERT ON ledger.postings
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger.check_transaction_balanced();

      -- Nothing is edited or deleted: corrections are new, reversing transactions.
      CREATE FUNCTION ledger.refuse_change() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        RAISE EXCEPTION 'ledger % rows are append-only', TG_TABLE_NAME USING ERRCODE = '42501';
      END $fn$;
      CREATE TRIGGER postings_append_only BEFORE UPDATE OR DELETE ON ledger.postings
        FOR EACH ROW EXECUTE FUNCTION ledger.refuse_change();
      CREATE TRIGGER transactions_append_only BEFORE UPDATE OR DELETE ON ledger.transactions
        FOR EACH ROW EXECUTE FUNCTION ledger.refuse_change();

      -- Two-phase transfers: a hold is pending until it is posted (settle) or voided (refund), once.
      CREATE TABLE ledger.holds (
        purchase_id text PRIMARY KEY,
        buyer_id text NOT NULL,
        seller_id text NOT NULL,
        amount_gas bigint NOT NULL CHECK (amount_gas > 0),
        status text NOT NULL CHECK (status IN ('pending', 'posted', 'voided')),
        hold_transaction_id text NOT NULL REFERENCES ledger.transactions(id),
        final_transaction_id text REFERENCES ledger.transactions(id),
        created_at timestamptz NOT NULL,
        resolved_at timestamptz,
        CONSTRAINT resolved_has_transaction CHECK ((status = 'pending') = (final_transaction_id IS NULL))
      );
      CREATE INDEX holds_buyer_pending ON ledger.holds (buyer_id) WHERE status = 'pending';
      CREATE INDEX holds_seller_pending ON ledger.holds (seller_id) WHERE status = 'pending';

      -- Cash-outs as the ledger sees them: gas parked in payouts_pending, then paid or returned once.
      CREATE TABLE ledger.cashouts (
        cashout_id text PRIMARY KEY,
        agent_id text NOT NULL,
        amount_gas bigint NOT NULL CHECK (amount_gas > 0),
        status text NOT NULL CHECK (status IN ('pending', 'paid', 'returned')),
        debit_transaction_id text NOT NULL REFERENCES ledger.transactions(id),
        final_transaction_id text REFERENCES ledger.transactions(id),
        created_at timestamptz NOT NULL,
        resolved_at timestamptz
      );
      CREATE INDEX cashouts_agent ON ledger.cashouts (agent_id);

      -- One outcome per referred agent (credited or refused by the weekly cap), so a replay answers the same.
      CREATE TABLE ledger.referral_outcomes (
        referred_id text PRIMARY KEY,
        referrer_id text NOT NULL,
        credited boolean NOT NULL,
        reason text,
        transaction_id text REFERENCES ledger.transactions(id),
        created_at timestamptz NOT NULL
      );
      CREATE INDEX referral_outcomes_referrer ON ledger.referral_outcomes (referrer_id, created_at) WHERE credited;
    `,
  },
  {
    version: 2,
    name: 'holds and cash-outs carry the split quoted when they were made',
    // Settle posts the hold's own fee and seller net; cashoutPaid posts the cash-out's own fee.
    // Rows made before this migration were quoted at the then fixed 10 % / 2 %, rounded half up.
    sql: `
      ALTER TABLE ledger.holds ADD COLUMN platform_fee_gas bigint, ADD COLUMN seller_net_gas bigint;
      UPDATE ledger.holds SET platform_fee_gas = (amount_gas * 20 + 100) / 200;
      UPDATE ledger.holds SET seller_net_gas = amount_gas - platform_fee_gas;
      ALTER TABLE ledger.holds ALTER COLUMN platform_fee_gas SET NOT NULL, ALTER COLUMN seller_net_gas SET NOT NULL,
        ADD CONSTRAINT holds_split_adds_up CHECK (platform_fee_gas >= 0 AND seller_net_gas >= 0 AND platform_fee_gas + seller_net_gas = amount_gas);
      ALTER TABLE ledger.cashouts ADD COLUMN fee_gas bigint;
      UPDATE ledger.cashouts SET fee_gas = (amount_gas * 4 + 100) / 200;
      ALTER TABLE ledger.cashouts ALTER COLUMN fee_gas SET NOT NULL,
        ADD CONSTRAINT cashouts_fee_within_amount CHECK (fee_gas >= 0 AND fee_gas <= amount_gas);
    `,
  },
  {
    version: 3,
    name: 'platform balances are derived from postings, not updated in place',
    // Every hold, settle and void used to update the one platform:escrow_holds row (and every fee the
    // platform_fees row, every credit the card_issuance row): all money movements queued on a few rows.
    // Platform accounts now only receive postings; their balance is the sum of those postings
    // (ledger.account_balances). Their stored balance is pinned at 0 by a CHECK, so nothing can
    // start updating them again unnoticed. Agent accounts keep their stored balance, atomic debit and CHECK.
    sql: `
      ALTER TABLE ledger.postings ALTER COLUMN balance_after DROP NOT NULL,
        ADD CONSTRAINT agent_postings_carry_balance_after CHECK (account_id LIKE 'platform:%' OR balance_after IS NOT NULL);
      UPDATE ledger.accounts SET balance = 0 WHERE kind = 'platform';
      ALTER TABLE ledger.accounts ADD CONSTRAINT platform_balance_is_derived CHECK (kind = 'agent' OR balance = 0);
      CREATE VIEW ledger.account_balances AS
        SELECT a.id, a.kind, a.agent_id,
               CASE WHEN a.kind = 'agent' THEN a.balance
                    ELSE COALESCE((SELECT sum(p.amount) FROM ledger.postings p WHERE p.account_id = a.id), 0)::bigint END AS balance
          FROM ledger.accounts a;
    `,
  },
  {
    version: 4,
    name: 'transactions are found by their checkout session',
    // The reconciling audit looks gas credits up by session id (ledger.gasCreditRecords with ids).
    sql: `CREATE INDEX transactions_session ON ledger.transactions (session_id) WHERE session_id IS NOT NULL;`,
  },
  {
    version: 5,
    name: 'a hold carries an evaluator\'s fee as a leg of its own (issue #35)',
    // amount = seller net + platform fee + evaluator fee; the fee is posted as evaluator_fee (withdrawable
    // like sale_earn: it is earned by work) or goes back to the buyer when no verdict was given.
    sql: `
      ALTER TABLE ledger.holds ADD COLUMN evaluator_id text, ADD COLUMN evaluator_fee_gas bigint NOT NULL DEFAULT 0,
        DROP CONSTRAINT holds_split_adds_up,
        ADD CONSTRAINT holds_split_adds_up CHECK (platform_fee_gas >= 0 AND seller_net_gas >= 0 AND evaluator_fee_gas >= 0
          AND platform_fee_gas + seller_net_gas + evaluator_fee_gas = amount_gas),
        ADD CONSTRAINT holds_evaluator_has_fee CHECK ((evaluator_id IS NULL) = (evaluator_fee_gas = 0));
      ALTER TABLE ledger.postings DROP CONSTRAINT postings_entry_type_check,
        ADD CONSTRAINT postings_entry_type_check CHECK (entry_type IN (
          'gas_purchase', 'escrow_hold', 'escrow_refund', 'sale_earn', 'platform_fee', 'referral_bonus',
          'cashout', 'cashout_paid', 'cashout_returned', 'escrow_release', 'evaluator_fee'));
    `,
  },
];
