/** Escrow, ratings: the buyer rates a completed purchase 1–5, changeable within a window; listings hears it. */
import type { Context, ServiceSchema } from 'moleculer';
import { InvalidStateError } from '../../packages/errors';
import { RATING_CHANGE_WINDOW_DAYS } from '../../packages/market-rules';
import { toolParams } from '../../packages/tool-catalogue';
import { requireAgent, type CallMeta } from '../../packages/tool-catalogue/meta';
import { asRole, toView } from './purchases';
import type { EscrowThis } from './types';

const DAY_MS = 86_400_000;

export const ratingsMixin: Partial<ServiceSchema> = {
  actions: {
    rate: {
      params: toolParams('rate_purchase'),
      async handler(this: EscrowThis, ctx: Context<{ purchaseId: string; rating: number; comment?: string }, CallMeta>) {
        const agent = requireAgent(ctx);
        const { purchaseId, rating } = ctx.params;
        const comment = ctx.params.comment?.trim() || null;
        const now = this.now();
        // The rated notice (listings recomputes the seller's score) is written only when the value changes.
        const row = await this.engine.fire(purchaseId, 'rate', (p) => asRole(p, agent.id, purchaseId, 'buyer', 'rate_purchase'), (p) => {
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
        }, 'rate_purchase');
        return { purchase: toView(row, agent.id) };
      },
    },
  },
};
