/**
 * ask_help round 8 (issue #26): the next call learned from the labelled questions (help-learned.ts)
 * replaces the readers' call when it clearly prefers another — never a call ruled by what was pasted,
 * one the asker made or set up, one out of turn, or a refund nobody asked a reason for — and an answer
 * about the asker's own order is grounded in that order. Questions written for this test.
 */
import { HelpIndex } from '../help';
import { accountSituation, learnedCall, type LabelledQuestion } from '../help-learned';
import { canComeNext } from '../help-want';
import labelled from '../../../packages/knowledge/labelled-questions.json';
import { asker, expectValidNextStep, FRESH_ACCOUNT } from './helpers';
import { tuningSets } from './heldout/sets';
import type { HelpAccount } from '../../../packages/contracts/support';

const help = new HelpIndex('https://market.example');
const ask = asker(help);

function withPurchase(role: 'buyer' | 'seller', status: string): HelpAccount {
  const me = FRESH_ACCOUNT.agentId;
  const purchase = {
    id: 'pur_round8', listingId: 'lst_r8', listingTitle: 'Port a script', buyerId: role === 'buyer' ? me : 'agt_other', sellerId: role === 'seller' ? me : 'agt_other', role,
    priceGas: 300, platformFeeGas: 30, sellerNetGas: 270, status, requirements: 'src/a.ts', acknowledgedAt: null, deliveredAt: status === 'delivered' ? '2026-11-26T10:00:00Z' : null,
    deliverySha256: null, completedAt: null, refundedAt: null, refundRequestedAt: null, disputedAt: null, autoReleaseAt: status === 'delivered' ? '2026-11-29T10:00:00Z' : null,
    deliverBy: '2026-12-03T10:00:00Z', rating: null, createdAt: '2026-11-26T09:00:00Z', updatedAt: '2026-11-26T10:00:00Z', deliveryDays: 7, ratingComment: null, refundReason: null,
    disputedBy: null, disputeReason: null, disputeOutcome: null, failureReason: null, approvalUrl: null, approvalExpiresAt: null,
  };
  return { ...FRESH_ACCOUNT, purchases: [purchase] } as unknown as HelpAccount;
}

describe('the labelled questions', () => {
  test('hold every tuning set question that names a next call (npm run help:examples is current)', () => {
    for (const { name, entries } of tuningSets()) {
      const expected = entries.filter((e) => e.expect.nextStep?.length).length;
      expect([name, (labelled as LabelledQuestion[]).filter((e) => e.set === name).length]).toEqual([name, expected]);
    }
  });

  test('the caller situation is read from its account: an order to deliver, a delivery to check, nothing', () => {
    expect(accountSituation(withPurchase('seller', 'awaiting_delivery'))).toBe('seller_pending');
    expect(accountSituation(withPurchase('buyer', 'delivered'))).toBe('buyer_delivered');
    expect(accountSituation(FRESH_ACCOUNT)).toBeNull();
  });

  test('a situation worded in new words gets the call its neighbours got', () => {
    expect(learnedCall('my web endpoint never saw a single event for the order that came in, where can I see what was sent?', null, null)?.tool).toBe('list_webhook_deliveries');
  });
});

describe('what the learned call may not replace', () => {
  test('a refund or a dispute needs a reason the asker gives', () => {
    expect(canComeNext("I'm the seller of pur_k1, it is awaiting_delivery and the port is finished. What now?", 'request_refund')).toBe(false);
    expect(canComeNext('Seller of pur_k1: the buyer wants Rust and I only do Python, I cannot do it. How do I back out?', 'request_refund')).toBe(true);
  });

  test('what the asker says is set up already is behind it', () => {
    expect(canComeNext('My payout address is already connected; I want 900 gas out.', 'connect_payouts')).toBe(false);
    expect(canComeNext('Registered fine and stored the key. What do I call to list a service?', 'register')).toBe(false);
  });

  test('an unknown tool name is answered with the closest real name, single words included', () => {
    for (const [sent, tool] of [['deliver', 'deliver_work'], ['buy_tokens', 'buy_gas'], ['purchase', 'purchase_service']]) {
      const a = ask(`Calling tool '${sent}' gives me 400 unknown_tool. Which name is right?`);
      expect([sent, a.nextStep?.tool]).toEqual([sent, tool]);
    }
  });
});

describe("an answer about the asker's own order", () => {
  test('cites the order from the account and fills its id into the call', () => {
    const a = ask('Can I get my gas back on my pending order? The seller is not answering.', withPurchase('buyer', 'awaiting_delivery'));
    expect(a.nextStep?.tool).toBe('request_refund');
    expect(a.nextStep?.arguments.purchaseId).toBe('pur_round8');
    expect(a.answer).toContain('pur_round8');
    expect(a.lookedAt).toContainEqual({ kind: 'purchase', id: 'pur_round8' });
    expectValidNextStep(a.nextStep);
  });
});
