/**
 * Purchase notices are declared once, in the machine (purchase-machine.ts NOTICES, MONEY_FACTS): escrow's
 * topics, the webhook events and their recipients, the notifications fan-out and the call table follow from
 * it. The public names are a contract: they are pinned here as they were when they were written by hand.
 */
import { ESCROW_TOPICS } from '../../../packages/contracts/escrow';
import { WEBHOOK_EVENT_RECIPIENTS, WEBHOOK_EVENTS } from '../../../packages/contracts/notifications';
import { MONEY_FACTS, NOTICES, recipientsOf, WEBHOOK_NOTICES } from '../../../packages/contracts/purchase-machine';
import { DURABLE_CONSUMES, DURABLE_PUBLISHES } from '../../../packages/call-table';
import { NOTICES as FAN_OUT } from '../events';

describe('purchase notices derived from the machine', () => {
  test('the webhook event names, their order and their recipients are those of the contract', () => {
    expect(WEBHOOK_EVENTS).toEqual([
      'purchase.created',
      'purchase.approval_required',
      'purchase.delivered',
      'purchase.completed',
      'purchase.refunded',
      'purchase.disputed',
      'purchase.evaluation_requested',
      'purchase.evaluated',
      'message.received',
      'gas.credited',
      'cashout.paid',
      'cashout.rejected',
    ]);
    expect(WEBHOOK_EVENT_RECIPIENTS).toEqual({
      'purchase.created': 'seller',
      'purchase.approval_required': 'buyer',
      'purchase.delivered': 'buyer',
      'purchase.completed': 'buyer and seller',
      'purchase.refunded': 'buyer and seller',
      'purchase.disputed': 'buyer and seller',
      'purchase.evaluation_requested': 'the evaluator the buyer named',
      'purchase.evaluated': 'buyer and seller (with the verdict and report)',
      'message.received': 'the other party of the purchase',
      'gas.credited': 'the agent credited',
      'cashout.paid': 'the seller cashing out',
      'cashout.rejected': 'the seller cashing out',
    });
  });

  test("escrow's topics keep their names and keys", () => {
    expect(ESCROW_TOPICS).toEqual({
      completed: 'escrow.purchase.completed',
      refunded: 'escrow.purchase.refunded',
      rated: 'escrow.purchase.rated',
      referralQualified: 'escrow.referral.qualified',
      approvalRequired: 'escrow.purchase.approval_required',
      approved: 'escrow.purchase.approved',
      created: 'escrow.purchase.created',
      delivered: 'escrow.purchase.delivered',
      disputed: 'escrow.purchase.disputed',
      completedNotice: 'escrow.purchase.completed_notice',
      refundedNotice: 'escrow.purchase.refunded_notice',
      messageSent: 'escrow.message.sent',
      evaluationRequested: 'escrow.purchase.evaluation_requested',
      evaluated: 'escrow.purchase.evaluated',
    });
  });

  test('every fact of the machine is published by escrow; every webhook notice is consumed and fanned out by notifications', () => {
    for (const fact of [...Object.values(MONEY_FACTS), ...Object.values(NOTICES)]) expect(DURABLE_PUBLISHES.escrow).toContain(fact.topic);
    for (const notice of WEBHOOK_NOTICES) {
      expect(DURABLE_CONSUMES.notifications).toContain(notice.topic);
      expect(FAN_OUT[notice.topic]).toBeDefined();
      expect(WEBHOOK_EVENTS).toContain(notice.webhook);
    }
    // A fact without a webhook (rated: listings reads it) is not notifications' business.
    expect(DURABLE_CONSUMES.notifications).not.toContain(NOTICES.rated.topic);
  });

  test('the fan-out tells the audience as its party; the seller not of a purchase it never saw', () => {
    const base = { purchaseId: 'p', buyerId: 'b', sellerId: 's', evaluatorId: 'e', listingId: 'l', priceGas: 100 };
    expect(FAN_OUT[NOTICES.evaluated.topic](base).map((n) => [n.agentId, n.type, n.data.role])).toEqual([
      ['b', 'purchase.evaluated', 'buyer'],
      ['s', 'purchase.evaluated', 'seller'],
    ]);
    expect(FAN_OUT[NOTICES.evaluation_requested.topic](base).map((n) => [n.agentId, n.data.role])).toEqual([['e', 'evaluator']]);
    expect(FAN_OUT[NOTICES.approved.topic](base).map((n) => [n.agentId, n.type])).toEqual([['s', 'purchase.created']]);
    expect(FAN_OUT[NOTICES.refunded.topic]({ ...base, sellerSees: false }).map((n) => n.agentId)).toEqual(['b']);
    expect(recipientsOf(NOTICES.refunded, { ...base, sellerSees: true }).map((r) => r.agentId)).toEqual(['b', 's']);
  });
});
