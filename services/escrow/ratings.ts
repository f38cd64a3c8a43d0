/**
 * Escrow, ratings: the buyer rates a completed purchase 1–5, changeable within a window; listings hears it.
 * The buyer also rates the evaluator it named (target "evaluator", issue #35), once; the evaluator's
 * signals are read from the purchases that named it (evaluatorReputation).
 */

import type { Context } from 'moleculer';
import type { ServiceSchemaOf } from '../../packages/runtime';
import { InvalidStateError } from '../../packages/errors';
import { RATING_CHANGE_WINDOW_DAYS } from '../../packages/market-rules';
import type { EvaluatorReputation } from '../../packages/contracts/escrow';
import { requireAgent, type CallMeta } from '../../packages/tool-catalogue/meta';
import { toolParams } from '../../packages/tool-catalogue';
import { lifecycleTool } from './lifecycle-tool';
import { asRole, toView, type PurchaseRow } from './purchases';
import type { EscrowThis } from './types';

const DAY_MS = 86_400_000;

type RateParams = { purchaseId: string; rating: number; comment?: string; target?: 'seller' | 'evaluator' };

// The rated notice (listings recomputes the seller's score) is written only when the value changes.
const rateSeller = lifecycleTool<RateParams>('rate_purchase', 'rate', 'buyer', function ({ purchaseId, rating, comment: given }) {
  const comment = given?.trim() || null;
  const now = this.now();
  return (p) => {
    if (p.rating === null) return { rating, rating_comment: comment, first_rated_at: now.toISOString() };
    const windowEnd = new Date(p.first_rated_at!).getTime() + RATING_CHANGE_WINDOW_DAYS * DAY_MS;
    if (now.getTime() > windowEnd) {
      throw new InvalidStateError(`Purchase ${purchaseId} was rated ${p.rating}; a rating can be changed only within ${RATING_CHANGE_WINDOW_DAYS} days of first rating it.`, {
        hint: 'The rating is final now. Use report_experience for feedback about the marketplace.',
        details: { purchaseId, rating: Number(p.rating), changeableUntil: new Date(windowEnd).toISOString() },
      });
    }
    if (Number(p.rating) === rating && p.rating_comment === comment) return null;
    return { rating, rating_comment: comment };
  };
}, ({ rating, comment }) => ({ rating, rating_comment: comment?.trim() || null }));

/** The buyer, on a purchase whose evaluator received the delivery; anything else is refused with what to do instead. */
function evaluatorRater(agentId: string, purchaseId: string) {
  return (p: PurchaseRow) => {
    const role = asRole(p, agentId, purchaseId, 'buyer', 'rate_purchase');
    if (!p.evaluator_id) {
      throw new InvalidStateError(`Purchase ${purchaseId} had no evaluator to rate.`, {
        hint: 'Rate the seller: rate_purchase {purchaseId, rating} without target.',
        details: { purchaseId, target: 'evaluator' },
      });
    }
    if (p.delivered_at === null || p.delivered_at === undefined) {
      throw new InvalidStateError(`The evaluator of purchase ${purchaseId} never received a delivery to evaluate.`, {
        hint: 'An evaluator can be rated only on a purchase it was asked to evaluate (the seller delivered).',
        details: { purchaseId, target: 'evaluator', status: p.status },
      });
    }
    return role;
  };
}

/** Once: decided after the engine answered a keyed retry of the same rating from the row (ADR 0035). */
function evaluatorRating(purchaseId: string, rating: number) {
  return (p: PurchaseRow) => {
    if (p.evaluator_rating !== null && p.evaluator_rating !== undefined) {
      throw new InvalidStateError(`You rated the evaluator of purchase ${purchaseId} ${p.evaluator_rating} already; an evaluator rating is given once.`, {
        hint: 'The evaluator rating is final. Use report_experience for feedback about the marketplace.',
        details: { purchaseId, target: 'evaluator', rating: Number(p.evaluator_rating) },
      });
    }
    return { evaluator_rating: rating };
  };
}

export const ratingsMixin: Partial<ServiceSchemaOf<EscrowThis>> = {
  actions: {
    rate: {
      params: toolParams('rate_purchase'),
      async handler(this: EscrowThis, ctx: Context<RateParams, CallMeta>) {
        if (ctx.params.target !== 'evaluator') return rateSeller.handler.call(this, ctx);
        const agent = requireAgent(ctx);
        const { purchaseId, rating } = ctx.params;
        // A keyed retry of a rating already given answers the purchase as it is (ADR 0035).
        const asked = ctx.meta?.idempotencyKey ? { evaluator_rating: rating } : undefined;
        const row = await this.engine.fire(purchaseId, 'rate_evaluator', evaluatorRater(agent.id, purchaseId), evaluatorRating(purchaseId, rating), 'rate_purchase', asked);
        return { purchase: toView(row, agent.id) };
      },
    },

    /** Internal: an agent's signals as an evaluator (whoami's evaluator). */
    evaluatorReputation: {
      params: { agentId: 'string' },
      async handler(this: EscrowThis, ctx: Context<{ agentId: string }>): Promise<EvaluatorReputation> {
        const r = await this.db.query<{ evaluations: string; accepted: string; rejected: string; timed_out: string; rating_sum: string; rating_count: string }>(
          `SELECT count(*) FILTER (WHERE delivered_at IS NOT NULL) AS evaluations,
                  count(*) FILTER (WHERE evaluation_verdict = 'accept') AS accepted,
                  count(*) FILTER (WHERE evaluation_verdict = 'reject') AS rejected,
                  count(*) FILTER (WHERE evaluation_expired_at IS NOT NULL) AS timed_out,
                  COALESCE(sum(evaluator_rating), 0) AS rating_sum, count(evaluator_rating) AS rating_count
             FROM escrow.purchases WHERE evaluator_id = $1`,
          [ctx.params.agentId],
        );
        const row = r.rows[0]!;
        const ratingCount = Number(row.rating_count);
        return {
          evaluations: Number(row.evaluations),
          accepted: Number(row.accepted),
          rejected: Number(row.rejected),
          timedOut: Number(row.timed_out),
          ratingAvg: ratingCount > 0 ? Math.round((Number(row.rating_sum) / ratingCount) * 100) / 100 : null,
          ratingCount,
        };
      },
    },
  },
};
