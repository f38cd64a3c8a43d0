/**
 * Escrow, sweepers: pending purchases whose hold outcome is unknown (retry the same keyed hold),
 * auto-release, auto-refund and approval expiry (the machine's sweeper transitions), referral checks, the relay.
 * Safe with several replicas: rows are claimed with FOR UPDATE SKIP LOCKED.
 */
import type { ServiceSchema } from 'moleculer';
import type { Queryable } from '../../packages/db';
import { enqueueEvent } from '../../packages/outbox';
import { runtimeOf } from '../../packages/runtime';
import { moneyEvents } from './events';
import { FUNDED_STATUSES, STATES, sweeperFrom, targetOf, transitionsFor, type PurchaseStatus } from '../../packages/contracts/purchase-machine';
import type { PurchaseRow } from './purchases';
import { errType } from './funding';
import type { EscrowMethods, EscrowThis } from './types';

const SWEEP_BATCH = 100;

/** The due-date column and the "done by" columns of each sweeper transition. */
const SWEEPS = {
  auto_release: { dueColumn: 'auto_release_at', extra: 'AND refund_requested_at IS NULL', at: 'completed_at', by: 'completed_by', byValue: 'auto_release' },
  auto_refund: { dueColumn: 'deliver_by', extra: '', at: 'refunded_at', by: 'refunded_by', byValue: 'auto_refund' },
  approval_expired: { dueColumn: 'approval_expires_at', extra: '', at: 'approval_decided_at', by: 'approval_decision', byValue: 'expired', also: ", failure_reason = 'approval_expired'" },
} as const satisfies Record<string, { dueColumn: string; extra: string; at: string; by: string; byValue: string; also?: string }>;

type SweeperMethods = Pick<EscrowMethods, 'sweepTransition' | 'sweepPending' | 'sweepReferrals' | 'sweepOnce'>;

const methods: SweeperMethods & ThisType<EscrowThis> = {
  /** Moves due purchases in one transaction per batch; each moved row writes its money event. */
  async sweepTransition(trigger) {
    const sweep: (typeof SWEEPS)[keyof typeof SWEEPS] & { also?: string } = SWEEPS[trigger];
    const from = sweeperFrom(trigger);
    const to = targetOf(trigger, 'sweeper', from[0]);
    const moneyEvent = transitionsFor(trigger)[0].moneyEvent;
    let total = 0;
    for (;;) {
      const now = this.now().toISOString();
      const n = await this.db.transaction(async (tx: Queryable) => {
        const r = await tx.query<PurchaseRow>(
          `UPDATE escrow.purchases SET status = $3, ${sweep.at} = $1, ${sweep.by} = $4, updated_at = $1${sweep.also ?? ''}
            WHERE id IN (SELECT id FROM escrow.purchases
                          WHERE status = ANY($5::text[]) AND ${sweep.dueColumn} <= $1 ${sweep.extra}
                          ORDER BY ${sweep.dueColumn} LIMIT $2 FOR UPDATE SKIP LOCKED)
              AND status = ANY($5::text[]) RETURNING *`,
          [now, SWEEP_BATCH, to, sweep.byValue, from],
        );
        for (const row of r.rows) for (const [topic, data] of moneyEvents(moneyEvent, row, now)) await enqueueEvent(tx, 'escrow', topic, data);
        return r.rows.length;
      });
      total += n;
      if (n < SWEEP_BATCH) return total;
    }
  },

  /** Pending purchases whose hold outcome is unknown (crash, timeout): ask the ledger again with the same key. */
  async sweepPending() {
    const { requestTimeoutMs } = runtimeOf(this.broker).config;
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
      } catch (err: any) {
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
      } catch (err: any) {
        this.logger.warn(`referral check of ${row.id} failed; retried next sweep`, err?.message);
      }
    }
    return n;
  },

  async sweepOnce() {
    const pending = await this.sweepPending();
    const released = await this.sweepTransition('auto_release');
    const refunded = await this.sweepTransition('auto_refund');
    const approvalsExpired = await this.sweepTransition('approval_expired');
    const referralsChecked = await this.sweepReferrals();
    const relayed = await this.relay.kick().catch(() => 0);
    return { pendingFunded: pending.funded, pendingFailed: pending.failed, released, refunded, approvalsExpired, referralsChecked, relayed };
  },
};

export const sweepersMixin: Partial<ServiceSchema> = {
  actions: {
    /** Runs the sweepers once: unknown holds, auto-release, auto-refund, referral checks, the relay. */
    sweep: {
      async handler(this: EscrowThis) {
        return this.sweepOnce();
      },
    },
  },
  methods: methods as any,
};
