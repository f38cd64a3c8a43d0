/**
 * Escrow, funding: a purchase is inserted `pending`, then funded by a keyed ledger.hold that carries
 * the split quoted at purchase. A refusal marks it failed; an unknown outcome (timeout, crash)
 * leaves it pending for the sweeper, which repeats the same keyed hold. Also the referral check
 * on a buyer's first funded purchase.
 */

import type { ServiceSchemaOf } from '../../packages/runtime';
import { InsufficientGasError, InvalidArgumentsError, MarketError, STATUS_BY_CODE } from '../../packages/errors';
import { smallestPackCovering } from '../../packages/market-rules';
import { enqueueEvent } from '../../packages/outbox';
import { callLedger, LEDGER } from '../../packages/contracts/ledger';
import { callAgents, AGENTS } from '../../packages/contracts/agents';
import { ESCROW_TOPICS } from '../../packages/contracts/escrow';
import { STATES, transitionFrom, transitionsFor } from '../../packages/contracts/purchase-machine';
import { SqlExpr } from './purchase-engine';
import type { PurchaseRow } from './purchases';
import type { EscrowMethods, EscrowThis } from './types';

const DAY_MS = 86_400_000;
const IDEMPOTENCY_WINDOW_MS = DAY_MS;
/** The state funding moves a purchase out of (to funded, or to failed). */
const FUNDING_FROM = transitionsFor('fund')[0].from[0];

/** A typed answer from the ledger that says the hold was NOT made (as opposed to a timeout or crash). */
function isDefinitiveRefusal(err: unknown): boolean {
  const type = errType(err);
  if (type === 'VALIDATION_ERROR') return true;
  return type in STATUS_BY_CODE && !['internal', 'service_unavailable', 'rate_limited'].includes(type);
}

/** The error's `type` (a MoleculerError's code, e.g. insufficient_gas), or '' when it has none. */
export function errType(err: unknown): string {
  const type = (err as { type?: unknown } | null | undefined)?.type;
  return typeof type === 'string' ? type : '';
}

type FundingMethods = Pick<EscrowMethods, 'findByIdempotencyKey' | 'replayPurchase' | 'fund' | 'holdExists' | 'markFunded' | 'insufficientGas' | 'checkReferral'>;

const methods = {
    /** Same agent + key within 24 h → that purchase (older keys are released for reuse). */
    async findByIdempotencyKey( buyerId: string, key: string, now: Date): Promise<PurchaseRow | undefined> {
      const cutoff = new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS).toISOString();
      await this.db.query(
        'UPDATE escrow.purchases SET idempotency_key = NULL WHERE buyer_id = $1 AND idempotency_key = $2 AND created_at < $3',
        [buyerId, key, cutoff],
      );
      const r = await this.db.query<PurchaseRow>('SELECT * FROM escrow.purchases WHERE buyer_id = $1 AND idempotency_key = $2', [buyerId, key]);
      return r.rows[0];
    },

    async replayPurchase(existing: PurchaseRow, listingId: string): Promise<PurchaseRow> {
      if (existing.listing_id !== listingId) {
        throw new InvalidArgumentsError('This Idempotency-Key was already used to buy another listing.', {
          hint: 'Use a new Idempotency-Key for a new purchase; reuse a key only to retry the very same call.',
          details: { purchaseId: existing.id, listingId: existing.listing_id },
        });
      }
      // Its hold outcome is still unknown: ask the ledger again with the same key (holds once).
      if (existing.status === FUNDING_FROM) return this.fund(existing);
      return existing;
    },

    /**
     * Holds the buyer's gas (keyed call, safe to repeat) and moves the purchase to awaiting_delivery.
     * A refusal marks it failed; an unknown outcome (timeout, crash) leaves it pending for the sweeper.
     */
    async fund(row: PurchaseRow): Promise<PurchaseRow> {
      const now = () => this.now().toISOString();
      try {
        // The hold carries the split quoted at purchase: settle posts exactly that.
        await callLedger(this.broker, LEDGER.hold, {
          key: `purchase:${row.id}:hold`,
          purchaseId: row.id,
          buyerId: row.buyer_id,
          sellerId: row.seller_id,
          amountGas: Number(row.price_gas) + Number(row.evaluator_fee_gas ?? 0),
          platformFeeGas: Number(row.platform_fee_gas),
          sellerNetGas: Number(row.seller_net_gas),
          // The evaluator's fee is held with the price, a leg of its own (issue #35).
          ...(row.evaluator_id ? { evaluatorId: row.evaluator_id, evaluatorFeeGas: Number(row.evaluator_fee_gas) } : {}),
        });
      } catch (err) {
        if (!isDefinitiveRefusal(err)) {
          await this.db
            .query('UPDATE escrow.purchases SET hold_checked_at = $2, hold_attempts = hold_attempts + 1 WHERE id = $1', [row.id, now()])
            .catch(() => undefined);
          this.logger.warn(`hold of ${row.id} has an unknown outcome; the sweeper retries it`, (err as Error | undefined)?.message);
          throw new MarketError('service_unavailable', 'The ledger did not confirm the escrow hold in time.', {
            hint: `Nothing is charged twice: retry purchase_service with the same Idempotency-Key, or poll get_purchase {"purchaseId": "${row.id}"} — it becomes awaiting_delivery or failed within a minute.`,
            details: { purchaseId: row.id, status: row.status },
            retryAfterSeconds: 5,
          });
        }
        if (errType(err) === 'invalid_state' && (await this.holdExists(row))) {
          // The ledger already holds this purchase's gas (a conflicting replay): it is funded, not failed.
          return this.markFunded(row);
        }
        const failed = await this.engine.fireFrom(row, 'fund_refused', 'buyer', { failure_reason: errType(err) || 'refused' });
        if (!failed) {
          // Someone else (a retry, the sweeper) settled its funding first: report that outcome.
          const current = await this.load(row.id);
          if (current && STATES[current.status].funded) return current;
        }
        if (errType(err) === 'insufficient_gas') throw await this.insufficientGas(row, err);
        throw err;
      }
      return this.markFunded(row);
    },

    async holdExists(row: PurchaseRow): Promise<boolean> {
      const hold = await callLedger(this.broker, LEDGER.getHold, { purchaseId: row.id })
        .catch(() => null);
      return !!hold && hold.status === 'pending' && Number(hold.amountGas) === Number(row.price_gas) + Number(row.evaluator_fee_gas ?? 0);
    },

    /**
     * The hold exists: pending → awaiting_delivery (once), or → awaiting_approval when the human asked
     * to approve purchases of this size (with its approval_required event); then the referral check.
     */
    async markFunded(row: PurchaseRow): Promise<PurchaseRow> {
      // One statement (its own transaction): the purchase moves, and the buyer's human is asked
      // (approval_required) or the seller learns of it (purchase.created) through the outbox — the
      // transition's notices; its timer (due_at: the delivery window, or the approval's expiry) starts. A buyer whose
      // referral was already checked is marked so here (no second round trip later).
      const written = await this.engine.fireFrom(row, row.needs_approval === true ? 'fund_for_approval' : 'fund', 'buyer', {
        referral_checked: new SqlExpr('referral_checked OR EXISTS (SELECT 1 FROM escrow.referral_checks c WHERE c.buyer_id = escrow.purchases.buyer_id)'),
      });
      const funded = written ?? (await this.load(row.id))!;
      if (transitionFrom('late_hold', 'ledger', funded.status)) {
        // A late hold for a purchase already marked failed (an old call outlived the sweeper's retry):
        // give the gas back through the outbox; the ledger's void key makes a repeat a no-op.
        this.logger.error(`purchase ${row.id} is failed but the ledger holds its gas: voiding the hold`);
        return this.engine.fire(row.id, 'late_hold', 'ledger');
      }
      await this.checkReferral(funded).catch((err: Error) => this.logger.warn(`referral check of ${row.id} deferred to the sweeper`, err.message));
      return funded;
    },

    async insufficientGas(row: PurchaseRow, err: unknown): Promise<InsufficientGasError> {
      type Shortfall = { balanceGas?: number; requiredGas?: number; shortfallGas?: number };
      const d: Shortfall = (err as { data?: { details?: Shortfall } } | null | undefined)?.data?.details ?? {};
      const requiredGas = Number(d.requiredGas ?? Number(row.price_gas) + Number(row.evaluator_fee_gas ?? 0));
      let balanceGas: number;
      if (typeof d.balanceGas === 'number') balanceGas = d.balanceGas;
      else {
        balanceGas = await callLedger(this.broker, LEDGER.balance, { agentId: row.buyer_id })
          .then((b) => b.gasBalance)
          .catch(() => 0);
      }
      const shortfallGas = Number(d.shortfallGas ?? Math.max(1, requiredGas - balanceGas));
      const pack = smallestPackCovering(shortfallGas);
      return new InsufficientGasError(
        `Not enough gas: this purchase needs ${requiredGas} gas and you have ${balanceGas} available (short by ${shortfallGas}).`,
        {
          hint: `Call buy_gas {"packId": "${pack.id}"} (${pack.gas} gas for ${pack.usd} USD covers the ${shortfallGas} gas shortfall), have a human approve the checkoutUrl, poll wallet until gasBalance rises, then call purchase_service again. Nothing was charged.`,
          details: { balanceGas, requiredGas, shortfallGas, suggestedPackId: pack.id, listingId: row.listing_id },
        },
      );
    },

    /**
     * On a referred buyer's first funded purchase, qualify the referral once (escrow.referral.qualified
     * via the outbox; the ledger pays 50 gas and enforces the weekly cap).
     */
    async checkReferral(row: PurchaseRow): Promise<void> {
      if (row.referral_checked || !STATES[row.status].funded) return;
      const done = await this.db.query('SELECT 1 FROM escrow.referral_checks WHERE buyer_id = $1', [row.buyer_id]);
      let referrerId: string | null = null;
      if (done.rowCount === 0) {
        try {
          const agent = await callAgents(this.broker, AGENTS.get, { agentId: row.buyer_id });
          referrerId = agent?.referredBy ?? null;
        } catch (err) {
          if (!['unauthorized', 'not_found'].includes(errType(err))) throw err;
        }
      }
      const enqueued = await this.db.transaction(async (tx) => {
        let queued = false;
        if (done.rowCount === 0) {
          const ins = await tx.query(
            `INSERT INTO escrow.referral_checks (buyer_id, referrer_id, purchase_id, checked_at) VALUES ($1, $2, $3, $4)
             ON CONFLICT (buyer_id) DO NOTHING`,
            [row.buyer_id, referrerId, row.id, this.now().toISOString()],
          );
          if (ins.rowCount === 1 && referrerId && referrerId !== row.buyer_id) {
            await enqueueEvent(tx, 'escrow', ESCROW_TOPICS.referralQualified, { referrerId, referredId: row.buyer_id, purchaseId: row.id });
            queued = true;
          }
        }
        await tx.query('UPDATE escrow.purchases SET referral_checked = true WHERE id = $1', [row.id]);
        return queued;
      });
      if (enqueued) await this.relay.wake();
    },
} satisfies FundingMethods & ThisType<EscrowThis>;

export const fundingMixin: Partial<ServiceSchemaOf<EscrowThis>> = { methods };
