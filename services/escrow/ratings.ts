/** Escrow, ratings: the buyer rates a completed purchase 1–5, changeable within a window; listings hears it. */

import type { ServiceSchemaOf } from '../../packages/runtime';
import { InvalidStateError } from '../../packages/errors';
import { RATING_CHANGE_WINDOW_DAYS } from '../../packages/market-rules';
import { lifecycleTool } from './lifecycle-tool';
import type { EscrowThis } from './types';

const DAY_MS = 86_400_000;

export const ratingsMixin: Partial<ServiceSchemaOf<EscrowThis>> = {
  actions: {
    // The rated notice (listings recomputes the seller's score) is written only when the value changes.
    rate: lifecycleTool<{ purchaseId: string; rating: number; comment?: string }>('rate_purchase', 'rate', 'buyer', function ({ purchaseId, rating, comment: given }) {
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
    }, ({ rating, comment }) => ({ rating, rating_comment: comment?.trim() || null })),
  },
};
