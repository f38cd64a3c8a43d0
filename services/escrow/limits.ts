/**
 * Escrow, spending limits: what the agent's human allows (per purchase, per UTC day and ISO week,
 * categories, "ask me above N gas"), checked in the same transaction that inserts the purchase, so
 * racing purchases can never together pass a budget. Also the human's private owner link and the
 * approval page's decisions (approve → awaiting_delivery, decline → failed with the hold voided).
 *
 * Only the gateway's pages call the write actions here; no tool in the catalogue reaches them.
 */
import type { ServiceSchemaOf } from '../../packages/runtime';
import { createHash, randomBytes } from 'node:crypto';
import type { Context } from 'moleculer';
import type { Queryable } from '../../packages/db';
import { ForbiddenError, InvalidArgumentsError, InvalidStateError, NotFoundError } from '../../packages/errors';
import { APPROVAL_WINDOW_HOURS, type SpendingLimitRule } from '../../packages/market-rules';
import { type SpendingLimitsInput, type SpendingLimitsView } from '../../packages/contracts/escrow';
import { BUDGET_STATUSES } from '../../packages/contracts/purchase-machine';
import { toView, type PurchaseRow, type PurchaseView } from './purchases';
import type { EscrowThis } from './types';

const DAY_MS = 86_400_000;
export const APPROVAL_WINDOW_MS = APPROVAL_WINDOW_HOURS * 3_600_000;

export interface LimitsRow {
  agent_id: string;
  per_purchase_max_gas: number | null;
  daily_budget_gas: number | null;
  weekly_budget_gas: number | null;
  allowed_categories: string[] | null;
  approval_above_gas: number | null;
  updated_at: Date;
}

/** "Today" is the UTC calendar day; "this week" the ISO week (Monday 00:00 UTC). */
export function budgetWindows(now: Date): { dayStart: Date; weekStart: Date } {
  const dayStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const sinceMonday = (dayStart.getUTCDay() + 6) % 7;
  return { dayStart, weekStart: new Date(dayStart.getTime() - sinceMonday * DAY_MS) };
}

export async function spentSince(db: Queryable, agentId: string, now: Date): Promise<{ today: number; week: number }> {
  const { dayStart, weekStart } = budgetWindows(now);
  const r = await db.query<{ today: string | number | null; week: string | number | null }>(
    `SELECT COALESCE(SUM(price_gas + evaluator_fee_gas) FILTER (WHERE created_at >= $2), 0) AS today, COALESCE(SUM(price_gas + evaluator_fee_gas), 0) AS week
       FROM escrow.purchases WHERE buyer_id = $1 AND created_at >= $3 AND status = ANY($4::text[])`,
    [agentId, dayStart.toISOString(), weekStart.toISOString(), BUDGET_STATUSES],
  );
  return { today: Number(r.rows[0]?.today ?? 0), week: Number(r.rows[0]?.week ?? 0) };
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export function limitsView(row: LimitsRow | undefined, spent: { today: number; week: number }): SpendingLimitsView {
  const daily = num(row?.daily_budget_gas);
  const weekly = num(row?.weekly_budget_gas);
  return {
    perPurchaseMaxGas: num(row?.per_purchase_max_gas),
    dailyBudgetGas: daily,
    weeklyBudgetGas: weekly,
    allowedCategories: row?.allowed_categories ?? null,
    approvalAboveGas: num(row?.approval_above_gas),
    spentTodayGas: spent.today,
    spentThisWeekGas: spent.week,
    remainingTodayGas: daily === null ? null : Math.max(0, daily - spent.today),
    remainingThisWeekGas: weekly === null ? null : Math.max(0, weekly - spent.week),
    setByHuman: !!row,
  };
}

function refuse(rule: SpendingLimitRule, message: string, hint: string, details: Record<string, unknown>): ForbiddenError {
  return new ForbiddenError(message, { hint, details: { rule, ...details } });
}

const ASK_HUMAN = 'Only your human can change limits, on the owner page or the next checkout page; no tool can raise them. Nothing was held.';

/**
 * Called inside the purchase's transaction with the limits row locked: throws forbidden naming the
 * rule broken, else says whether the purchase needs the human's approval.
 */
export function checkLimits(limits: LimitsRow, priceGas: number, category: string | null, spent: { today: number; week: number }): { needsApproval: boolean } {
  const v = limitsView(limits, spent);
  if (v.allowedCategories && !(category && v.allowedCategories.includes(category))) {
    throw refuse('category_not_allowed', `Your human allows purchases only in ${v.allowedCategories.join(', ') || 'no category'}; this listing is in ${category ?? 'no category'}.`,
      `search_services with category set to one of: ${v.allowedCategories.join(', ')}. ${ASK_HUMAN}`,
      { category, allowedCategories: v.allowedCategories, priceGas });
  }
  if (v.perPurchaseMaxGas !== null && priceGas > v.perPurchaseMaxGas) {
    throw refuse('per_purchase_max', `This purchase costs ${priceGas} gas; your human allows at most ${v.perPurchaseMaxGas} gas per purchase.`,
      `search_services with maxPriceGas ${v.perPurchaseMaxGas}. ${ASK_HUMAN}`,
      { priceGas, limitGas: v.perPurchaseMaxGas, remainingGas: v.perPurchaseMaxGas });
  }
  if (v.dailyBudgetGas !== null && spent.today + priceGas > v.dailyBudgetGas) {
    throw refuse('daily_budget', `This purchase costs ${priceGas} gas; ${v.remainingTodayGas} gas of today's ${v.dailyBudgetGas}-gas budget are left (${spent.today} spent, UTC day).`,
      `Buy something within ${v.remainingTodayGas} gas, or wait for the next UTC day. ${ASK_HUMAN}`,
      { priceGas, limitGas: v.dailyBudgetGas, spentGas: spent.today, remainingGas: v.remainingTodayGas });
  }
  if (v.weeklyBudgetGas !== null && spent.week + priceGas > v.weeklyBudgetGas) {
    throw refuse('weekly_budget', `This purchase costs ${priceGas} gas; ${v.remainingThisWeekGas} gas of this week's ${v.weeklyBudgetGas}-gas budget are left (${spent.week} spent, ISO week from Monday UTC).`,
      `Buy something within ${v.remainingThisWeekGas} gas, or wait for Monday 00:00 UTC. ${ASK_HUMAN}`,
      { priceGas, limitGas: v.weeklyBudgetGas, spentGas: spent.week, remainingGas: v.remainingThisWeekGas });
  }
  return { needsApproval: v.approvalAboveGas !== null && priceGas > v.approvalAboveGas };
}

/** The buyer's limits row, locked for the purchase's transaction (none: no limits, nothing to lock). */
export async function lockLimits(tx: Queryable, agentId: string): Promise<LimitsRow | undefined> {
  const r = await tx.query<LimitsRow>('SELECT * FROM escrow.spending_limits WHERE agent_id = $1 FOR UPDATE', [agentId]);
  return r.rows[0];
}

export function newApprovalToken(): string {
  return randomBytes(24).toString('base64url');
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

function cleanLimits(p: SpendingLimitsInput): SpendingLimitsInput {
  const gas = (field: keyof SpendingLimitsInput, min: number) => {
    const v = p[field];
    if (v === null || v === undefined) return null;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > 100_000_000) {
      throw new InvalidArgumentsError(`${field} must be a whole number of gas of at least ${min}, or empty for no limit.`, { details: { field } });
    }
    return v;
  };
  const cats = p.allowedCategories;
  return {
    perPurchaseMaxGas: gas('perPurchaseMaxGas', 1),
    dailyBudgetGas: gas('dailyBudgetGas', 0),
    weeklyBudgetGas: gas('weeklyBudgetGas', 0),
    approvalAboveGas: gas('approvalAboveGas', 0),
    allowedCategories: cats === null || cats === undefined ? null : [...new Set(cats.map((c) => c.trim().toLowerCase()).filter(Boolean))].slice(0, 50),
  };
}

/** The limits row, if any, and what was spent since the budget windows' starts, in one round trip. */
async function limitsViewOf(db: Queryable, agentId: string, dayStart: Date, weekStart: Date): Promise<SpendingLimitsView> {
  const r = await db.query<LimitsRow & { has_row: boolean; today: string | number | null; week: string | number | null }>(
    `SELECT l.*, l.agent_id IS NOT NULL AS has_row, s.today, s.week
       FROM (SELECT COALESCE(SUM(price_gas) FILTER (WHERE created_at >= $2), 0) AS today, COALESCE(SUM(price_gas), 0) AS week
               FROM escrow.purchases WHERE buyer_id = $1 AND created_at >= $3 AND status = ANY($4::text[])) s
       LEFT JOIN escrow.spending_limits l ON l.agent_id = $1`,
    [agentId, dayStart.toISOString(), weekStart.toISOString(), BUDGET_STATUSES],
  );
  const row = r.rows[0];
  return limitsView(row?.has_row ? row : undefined, { today: Number(row?.today ?? 0), week: Number(row?.week ?? 0) });
}

export const limitsMixin: Partial<ServiceSchemaOf<EscrowThis>> = {
  actions: {
    /** The agent's limits and what it spent today / this week (whoami, wallet, owner page). */
    limitsOf: {
      params: { agentId: 'string' },
      async handler(this: EscrowThis, ctx: Context<{ agentId: string }>): Promise<SpendingLimitsView> {
        // One round trip (whoami and wallet ask on every poll): the limits row, if any, and spentSince's sums.
        // Embedded PGlite keeps the answer until escrow's next write (or the next budget day).
        const { dayStart, weekStart } = budgetWindows(this.now());
        const load = () => limitsViewOf(this.db, ctx.params.agentId, dayStart, weekStart);
        return this.singleWriter ? this.singleWriter.get(`limits:${ctx.params.agentId}:${dayStart.toISOString()}`, load) : load();
      },
    },
    /** Set by the human on a checkout or owner page (the gateway checked the page's CSRF token). */
    setLimits: {
      params: { agentId: 'string', limits: 'object' },
      async handler(this: EscrowThis, ctx: Context<{ agentId: string; limits: SpendingLimitsInput }>): Promise<SpendingLimitsView> {
        await saveLimits(this.db, ctx.params.agentId, ctx.params.limits, this.now().toISOString());
        const r = await this.db.query<LimitsRow>('SELECT * FROM escrow.spending_limits WHERE agent_id = $1', [ctx.params.agentId]);
        return limitsView(r.rows[0], await spentSince(this.db, ctx.params.agentId, this.now()));
      },
    },

    /** A new private owner link; the token is returned once and only its hash is kept. */
    createOwnerLink: {
      params: { agentId: 'string' },
      async handler(this: EscrowThis, ctx: Context<{ agentId: string }>): Promise<{ token: string }> {
        return { token: await newOwnerLink(this.db, ctx.params.agentId, this.now().toISOString()) };
      },
    },

    ownerLink: {
      params: { token: 'string' },
      async handler(this: EscrowThis, ctx: Context<{ token: string }>): Promise<{ agentId: string }> {
        const r = await this.db.query<{ agent_id: string }>('SELECT agent_id FROM escrow.owner_links WHERE token_sha256 = $1 AND revoked_at IS NULL', [sha256(ctx.params.token)]);
        if (!r.rows[0]) throw new NotFoundError('This owner link is unknown or was revoked.', { hint: 'Approve a new checkout for the agent to get a new owner link.' });
        return { agentId: r.rows[0].agent_id };
      },
    },

    revokeOwnerLink: {
      params: { token: 'string' },
      async handler(this: EscrowThis, ctx: Context<{ token: string }>): Promise<{ revoked: boolean }> {
        const r = await this.db.query('UPDATE escrow.owner_links SET revoked_at = $2 WHERE token_sha256 = $1 AND revoked_at IS NULL', [sha256(ctx.params.token), this.now().toISOString()]);
        return { revoked: r.rowCount === 1 };
      },
    },

    /**
     * The live owner links of this link's agent (when each was made; which one is this), so the human
     * always sees whether another browser holds one too (issue #23).
     */
    ownerLinks: {
      params: { token: 'string' },
      async handler(this: EscrowThis, ctx: Context<{ token: string }>): Promise<{ links: { createdAt: string; current: boolean }[] }> {
        const r = await this.db.query<{ created_at: Date; current: boolean }>(
          `SELECT l.created_at, l.token_sha256 = $1 AS current FROM escrow.owner_links l
            WHERE l.revoked_at IS NULL AND l.agent_id = (SELECT agent_id FROM escrow.owner_links WHERE token_sha256 = $1 AND revoked_at IS NULL)
            ORDER BY l.created_at`,
          [sha256(ctx.params.token)],
        );
        return { links: r.rows.map((x) => ({ createdAt: new Date(x.created_at).toISOString(), current: x.current })) };
      },
    },

    /** Revokes every live owner link of this link's agent except this one. */
    revokeOtherOwnerLinks: {
      params: { token: 'string' },
      async handler(this: EscrowThis, ctx: Context<{ token: string }>): Promise<{ revoked: number }> {
        const r = await this.db.query(
          `UPDATE escrow.owner_links SET revoked_at = $2
            WHERE revoked_at IS NULL AND token_sha256 <> $1
              AND agent_id = (SELECT agent_id FROM escrow.owner_links WHERE token_sha256 = $1 AND revoked_at IS NULL)`,
          [sha256(ctx.params.token), this.now().toISOString()],
        );
        return { revoked: r.rowCount };
      },
    },

    /**
     * Limits submitted on the page before a Stripe payment, bound to the FIRST browser that submits it:
     * that browser may resubmit (its limits are replaced), any other browser is refused (staged: false)
     * and changes nothing. Last-writer-wins here let the agent, which has the checkout URL too, replace
     * its human's limits (issue #23). They apply only if the payer's browser is the one that staged them.
     */
    stageCheckoutLimits: {
      params: { sessionId: 'string', agentId: 'string', limits: { type: 'object', nullable: true, optional: true }, browser: 'string' },
      async handler(this: EscrowThis, ctx: Context<{ sessionId: string; agentId: string; limits?: SpendingLimitsInput | null; browser: string }>): Promise<{ staged: boolean }> {
        const limits = ctx.params.limits ? cleanLimits(ctx.params.limits) : null;
        const r = await this.db.query(
          `INSERT INTO escrow.checkout_limits (session_id, agent_id, limits, browser_sha256, created_at) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (session_id) DO UPDATE SET limits = $3 WHERE escrow.checkout_limits.claimed_at IS NULL
             AND escrow.checkout_limits.agent_id = $2 AND escrow.checkout_limits.browser_sha256 = $4`,
          [ctx.params.sessionId, ctx.params.agentId, limits ? JSON.stringify(limits) : null, sha256(ctx.params.browser), this.now().toISOString()],
        );
        return { staged: r.rowCount === 1 };
      },
    },

    /**
     * The payer claims a paid Stripe checkout (the gateway checked with payments the one-time secret Stripe
     * returned them with): a new owner link, once per checkout; a second claim gets nothing. The limits
     * staged on the page before paying apply only when `browser` is the one that staged them; limits staged
     * by another browser (the agent, which opened the page first) are dropped and the limits in force stay
     * as they are (issue #39). One transaction: a failure leaves the checkout unclaimed, to claim again.
     */
    claimCheckoutLimits: {
      params: { sessionId: 'string', agentId: 'string', browser: { type: 'string', optional: true } },
      async handler(this: EscrowThis, ctx: Context<{ sessionId: string; agentId: string; browser?: string }>): Promise<{ ownerToken: string | null; limitsApplied: boolean }> {
        const { sessionId, agentId, browser } = ctx.params;
        const now = this.now().toISOString();
        return this.db.transaction(async (tx) => {
          const r = await tx.query<{ limits: SpendingLimitsInput | null; browser_sha256: string | null }>(
            `INSERT INTO escrow.checkout_limits (session_id, agent_id, limits, browser_sha256, created_at, claimed_at) VALUES ($1, $2, NULL, NULL, $3, $3)
             ON CONFLICT (session_id) DO UPDATE SET claimed_at = $3
               WHERE escrow.checkout_limits.claimed_at IS NULL AND escrow.checkout_limits.agent_id = $2
             RETURNING limits, browser_sha256`,
            [sessionId, agentId, now],
          );
          const row = r.rows[0];
          if (!row) return { ownerToken: null, limitsApplied: false };
          const staged = browser && row.browser_sha256 === sha256(browser) ? row.limits : null;
          if (staged) await saveLimits(tx, agentId, staged, now);
          return { ownerToken: await newOwnerLink(tx, agentId, now), limitsApplied: !!staged };
        });
      },
    },

    /** The owner page's recent purchases of the agent (as buyer). */
    recentPurchases: {
      params: { agentId: 'string', limit: { type: 'number', integer: true, min: 1, max: 100, optional: true } },
      async handler(this: EscrowThis, ctx: Context<{ agentId: string; limit?: number }>): Promise<{ purchases: PurchaseView[] }> {
        const r = await this.db.query<PurchaseRow>('SELECT * FROM escrow.purchases WHERE buyer_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2', [ctx.params.agentId, ctx.params.limit ?? 20]);
        return { purchases: r.rows.map((row) => toView(row)) };
      },
    },

    /** The approval page's purchase (by its approval token). */
    approval: {
      params: { token: 'string' },
      async handler(this: EscrowThis, ctx: Context<{ token: string }>): Promise<{ purchase: PurchaseView }> {
        const row = await loadByApprovalToken(this, ctx.params.token);
        return { purchase: toView(row) };
      },
    },

    /** The human's answer on the approval page: approve → awaiting_delivery, decline → failed (hold voided). */
    decideApproval: {
      params: { token: 'string', decision: { type: 'enum', values: ['approve', 'decline'] } },
      async handler(this: EscrowThis, ctx: Context<{ token: string; decision: 'approve' | 'decline' }>): Promise<{ purchase: PurchaseView }> {
        const found = await loadByApprovalToken(this, ctx.params.token);
        // Past its expiry the approval is over whatever the sweeper has done yet: it expires now, as the
        // sweeper would (failed, hold voided), and the human's answer is refused (issue #23).
        const now = this.now();
        let expired = false;
        const row = await this.engine.fire(
          found.id,
          [ctx.params.decision, 'approval_expired'],
          (p) => {
            expired = p.status === 'awaiting_approval' && !!p.due_at && new Date(p.due_at).getTime() <= now.getTime();
            return expired ? 'sweeper' : 'owner';
          },
          {},
          'this approval',
        );
        if (expired) {
          throw new InvalidStateError(`This approval expired at ${new Date(found.due_at!).toISOString()}: nothing was approved, and the held ${Number(found.price_gas)} gas went back to the agent's balance.`, {
            hint: 'Ask your agent to buy again if you still want it; the new purchase gets a new approval link.',
            details: { purchaseId: row.id, status: row.status, approvalExpiresAt: new Date(found.due_at!).toISOString() },
          });
        }
        return { purchase: toView(row) };
      },
    },
  },
};

async function saveLimits(db: Queryable, agentId: string, input: SpendingLimitsInput, now: string): Promise<void> {
  const l = cleanLimits(input);
  await db.query(
    `INSERT INTO escrow.spending_limits (agent_id, per_purchase_max_gas, daily_budget_gas, weekly_budget_gas, allowed_categories, approval_above_gas, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (agent_id) DO UPDATE SET per_purchase_max_gas = $2, daily_budget_gas = $3, weekly_budget_gas = $4,
       allowed_categories = $5, approval_above_gas = $6, updated_at = $7`,
    [agentId, l.perPurchaseMaxGas, l.dailyBudgetGas, l.weeklyBudgetGas, l.allowedCategories, l.approvalAboveGas, now],
  );
}

/** A new private owner link; the token is returned once and only its hash is kept. */
async function newOwnerLink(db: Queryable, agentId: string, now: string): Promise<string> {
  const token = randomBytes(24).toString('base64url');
  await db.query('INSERT INTO escrow.owner_links (token_sha256, agent_id, created_at) VALUES ($1, $2, $3)', [sha256(token), agentId, now]);
  return token;
}

async function loadByApprovalToken(self: EscrowThis, token: string): Promise<PurchaseRow> {
  const r = await self.db.query<PurchaseRow>('SELECT * FROM escrow.purchases WHERE approval_token = $1', [token]);
  if (!r.rows[0]) throw new NotFoundError('This approval link is unknown.', { hint: 'Ask your agent for the approvalUrl of its purchase (get_purchase shows it while it awaits approval).' });
  return r.rows[0];
}
