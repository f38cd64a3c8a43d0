/**
 * Escrow, sweepers: pending purchases whose hold outcome is unknown (retry the same keyed hold),
 * auto-release, auto-refund and approval expiry (the machine's sweeper transitions), referral checks, the relay.
 * Safe with several replicas: rows are claimed with FOR UPDATE SKIP LOCKED.
 */

import type { ServiceSchemaOf } from '../../packages/runtime';
import { DUE_AT, FUNDED_STATUSES, nextStepHint, STATES, sweeperFrom, type PurchaseStatus, type Trigger } from '../../packages/contracts/purchase-machine';
import { ForbiddenError, InvalidStateError, NotFoundError } from '../../packages/errors';
import type { Context } from 'moleculer';
import type { PurchaseRow } from './purchases';
import { errType } from './funding';
import type { EscrowMethods, EscrowThis } from './types';

const SWEEP_BATCH = 100;

type SweeperMethods = Pick<EscrowMethods, 'sweepTransition' | 'sweepTimers' | 'sweepPending' | 'sweepReferrals' | 'sweepOnce'>;

const methods = {
  /**
   * One timed transition (`after` in purchase-machine.ts): due purchases move in batches through the
   * engine (claimed FOR UPDATE SKIP LOCKED, their money events in the same transaction).
   */
  async sweepTransition(trigger) {
    let total = 0;
    for (const t of this.engine.timed().filter((x) => x.trigger === trigger)) {
      for (;;) {
        const n = await this.engine.fireDue(t, SWEEP_BATCH);
        total += n;
        if (n < SWEEP_BATCH) break;
      }
    }
    return total;
  },

  /** Every timed transition of the machine, in table order: a new timer in the table is swept with no edit here. */
  async sweepTimers() {
    const moved: Record<string, number> = {};
    for (const trigger of new Set(this.engine.timed().map((t) => t.trigger))) moved[trigger] = await this.sweepTransition(trigger);
    return moved;
  },

  /** Pending purchases whose hold outcome is unknown (crash, timeout): ask the ledger again with the same key. */
  async sweepPending() {
    const { requestTimeoutMs } = this.config;
    const now = this.now();
    const staleBefore = new Date(now.getTime() - Math.max(2 * requestTimeoutMs, 2000)).toISOString();
    const claimed = await this.db.query<PurchaseRow>(
      `UPDATE escrow.purchases SET hold_checked_at = $1, hold_attempts = hold_attempts + 1
        WHERE id IN (SELECT id FROM escrow.purchases
                      WHERE status = ANY($4::text[]) AND created_at < $2 AND (hold_checked_at IS NULL OR hold_checked_at < $2)
                      ORDER BY created_at LIMIT $3 FOR UPDATE SKIP LOCKED)
        RETURNING *`,
      [now.toISOString(), staleBefore, SWEEP_BATCH, sweeperFrom('fund')],
    );
    let funded = 0;
    let failed = 0;
    for (const row of claimed.rows) {
      try {
        const r = await this.fund(row);
        if (STATES[r.status].funded) funded++;
      } catch (err) {
        if (errType(err) === 'service_unavailable') continue;
        failed++;
      }
    }
    return { funded, failed };
  },

  async sweepReferrals() {
    const r = await this.db.query<PurchaseRow>(
      `SELECT * FROM escrow.purchases WHERE NOT referral_checked AND status = ANY($2::text[]) ORDER BY created_at LIMIT $1`,
      [SWEEP_BATCH, FUNDED_STATUSES satisfies PurchaseStatus[]],
    );
    let n = 0;
    for (const row of r.rows) {
      try {
        await this.checkReferral(row);
        n++;
      } catch (err) {
        this.logger.warn(`referral check of ${row.id} failed; retried next sweep`, (err as Error | undefined)?.message);
      }
    }
    return n;
  },

  async sweepOnce() {
    const pending = await this.sweepPending();
    // Today's timers keep their names in the answer; a timer added to the table shows under its trigger.
    const { auto_release: released = 0, auto_refund: refunded = 0, approval_expired: approvalsExpired = 0, ...otherTimers } = await this.sweepTimers();
    const referralsChecked = await this.sweepReferrals();
    const relayed = await this.relay.kick().catch(() => 0);
    return { pendingFunded: pending.funded, pendingFailed: pending.failed, released, refunded, approvalsExpired, ...otherTimers, referralsChecked, relayed };
  },
} satisfies SweeperMethods & ThisType<EscrowThis>;

export const sweepersMixin: Partial<ServiceSchemaOf<EscrowThis>> = {
  actions: {
    /** Runs the sweepers once: unknown holds, auto-release, auto-refund, referral checks, the relay. */
    sweep: {
      async handler(this: EscrowThis) {
        return this.sweepOnce();
      },
    },
    /**
     * Sandbox only (ADR 0040): the timer leaving one purchase's state comes due now and the sweeper fires it —
     * the same transition, guard and money path as a real timeout, only sooner. Refused with NODE_ENV=production
     * or Stripe configured (real money): there no clock of a purchase can be moved.
     */
    sandboxFireTimer: {
      params: { purchaseId: 'string' },
      async handler(this: EscrowThis, ctx: Context<{ purchaseId: string }>) {
        const { nodeEnv, stripeSecretKey } = this.config;
        if (nodeEnv === 'production' || stripeSecretKey) {
          throw new ForbiddenError('Timers can be fired early only in the sandbox (no Stripe keys, NODE_ENV not production).', { hint: 'In production a timer fires when it is due.' });
        }
        const { purchaseId } = ctx.params;
        const r = await this.db.query<PurchaseRow>(`SELECT * FROM escrow.purchases WHERE id = $1`, [purchaseId]);
        const row = r.rows[0];
        if (!row) throw new NotFoundError(`No purchase ${purchaseId}.`);
        const t = this.engine.timed().find((x) => x.from.includes(row.status) && (!x.after.unless || row[x.after.unless as keyof PurchaseRow] == null));
        if (!t || row.due_at == null) throw new InvalidStateError(`Purchase ${purchaseId} is ${row.status}: no timer is running.`, { hint: nextStepHint(row.status) });
        // Only the due time moves, and only for a purchase still in that state; the sweeper's transition does the rest.
        await this.db.query(`UPDATE escrow.purchases SET ${DUE_AT} = LEAST(${DUE_AT}, $3) WHERE id = $1 AND status = $2`, [purchaseId, row.status, this.now().toISOString()]);
        await this.sweepTransition(t.trigger as Trigger);
        const after = await this.db.query<PurchaseRow>(`SELECT status FROM escrow.purchases WHERE id = $1`, [purchaseId]);
        return { purchaseId, trigger: t.trigger, status: after.rows[0]!.status };
      },
    },
  },
  methods,
};
