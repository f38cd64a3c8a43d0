/**
 * ask_help round 4 (issue #26): the classes of failure set D showed, each asked in this test's own
 * words (none is taken from an evaluation set): talking to the other party, a checkout not paid yet,
 * rating after completion, cancelling, a delivery that is not what the listing said, choosing between
 * sellers, a mistyped tool name, answers grounded in the caller's own purchase, rules with numbers
 * worked out, and another agent's data appended to a fair question.
 */
import type { PurchaseView } from '../../../packages/contracts/escrow';
import type { HelpAccount } from '../../../packages/contracts/support';
import { HelpIndex, ruleFacts } from '../help';
import { expectValidNextStep } from './helpers';

const help = new HelpIndex('https://market.example');
const now = new Date('2026-11-26T12:00:00Z');

function purchase(id: string, role: 'buyer' | 'seller', status: PurchaseView['status']): PurchaseView & { role: 'buyer' | 'seller' } {
  return {
    id,
    role,
    listingId: 'lst_x1',
    listingTitle: 'Jest tests for a TypeScript module',
    buyerId: role === 'buyer' ? 'agt_me' : 'agt_other',
    sellerId: role === 'seller' ? 'agt_me' : 'agt_other',
    priceGas: 250,
    platformFeeGas: 25,
    sellerNetGas: 225,
    status,
    requirements: 'src/index.ts',
    acknowledgedAt: null,
    deliveredAt: status === 'awaiting_delivery' ? null : '2026-11-25T12:00:00Z',
    deliverySha256: null,
    completedAt: null,
    refundedAt: null,
    refundRequestedAt: null,
    disputedAt: status === 'disputed' ? '2026-11-25T18:00:00Z' : null,
    autoReleaseAt: status === 'delivered' ? '2026-11-28T12:00:00Z' : null,
    deliverBy: '2026-12-02T12:00:00Z',
    rating: null,
    createdAt: '2026-11-24T12:00:00Z',
    updatedAt: '2026-11-25T12:00:00Z',
    deliveryDays: 7,
    ratingComment: null,
    refundReason: null,
    disputedBy: status === 'disputed' ? 'buyer' : null,
    disputeReason: status === 'disputed' ? 'Half of the tests do not compile.' : null,
    disputeOutcome: null,
  } as unknown as PurchaseView & { role: 'buyer' | 'seller' };
}

function account(...purchases: PurchaseView[]): HelpAccount {
  return {
    agentId: 'agt_me',
    purchases,
    wallet: { gasBalance: 250, heldGas: 250, withdrawableGas: 0, pendingEarningsGas: 0, lifetimeEarnedGas: 0 },
    limits: null,
    webhooks: [],
    failedDeliveries: [],
    recentErrors: [],
  } as unknown as HelpAccount;
}

const fresh = account();
const ask = (question: string, acc: HelpAccount | null = fresh) => help.answer({ question, account: acc, now });

const goals: Array<[string, string]> = [
  ['send_message', 'is there a way to dm the buyer about a missing input file?'],
  ['send_message', 'how can I send a quick note to the seller of the job I ordered'],
  ['get_checkout', 'my browser session died and the payment link for the gas pack is gone, my owner had not paid it. how to recover it?'],
  ['get_checkout', 'buy_gas gave me a checkout url an hour ago; my human has not opened it yet and my balance is still 0. what now?'],
  ['rate_purchase', 'Purchase pur_q9 is completed and the tests were excellent. How do I give the seller five stars?'],
  ['request_refund', 'please tell me how to call off the purchase I made this morning'],
  ['dispute_purchase', 'The seller delivered a Rust crate but the listing I paid for promised a TypeScript library. What now?'],
  ['purchase_service', 'Two offers for the same job: seller A isSeed true with salesCount 12, seller B has no sales and reputation unknown. Which one do I go with?'],
];

describe('ask_help round 4: the goals set D missed, in other words', () => {
  test.each(goals)('%s: %s', (tool, question) => {
    const a = ask(question);
    expect(a.declined).toBeFalsy();
    expect(a.nextStep?.tool).toBe(tool);
    expectValidNextStep(a.nextStep);
  });

  test('a checkout not paid yet never suggests buying again', () => {
    const a = ask('I ran buy_gas with the builder pack, nobody has approved the checkout yet and whoami shows 0 gas. Next step?');
    expect(['get_checkout', 'wallet', 'whoami']).toContain(a.nextStep?.tool);
    expect(a.nextStep?.tool).not.toBe('buy_gas');
  });

  test('a rating asked before the purchase is completed: confirm first', () => {
    const a = ask('The analysis arrived and it is solid. Which call releases my payment to the seller, and may I review them after?');
    expect(a.nextStep?.tool).toBe('confirm_delivery');
  });

  test('work that matches the listing but not the taste is not a mismatch to dispute', () => {
    const a = ask('The seller delivered a logo exactly as described in the listing, I just dislike the colours. Dispute?');
    expect(a.nextStep?.tool).not.toBe('dispute_purchase');
  });

  test('a mistyped tool name in unknown_tool is answered with the closest real tool', () => {
    const a = ask('calling {"tool":"cancel_order"} answers 400 unknown_tool. Which name should I use?');
    expect(a.nextStep?.tool).toBe('request_refund');
    const b = ask('got unknown_tool for "approve_delivery", what is it really called?');
    expect(b.nextStep?.tool).toBe('confirm_delivery');
    // The object still decides when the verb is generic.
    expect(ask('unknown_tool: "get_balance" — what should I call?').nextStep?.tool).toBe('wallet');
  });
});

describe('ask_help round 4: answers cite the caller\'s own purchase', () => {
  test('a refund asked by a buyer whose purchase was delivered names it', () => {
    const a = ask('can I still have my gas returned for the thing I ordered, or is it too late now?', account(purchase('pur_Delivered1', 'buyer', 'delivered')));
    expect(a.answer).toContain('pur_Delivered1');
    expect(a.lookedAt?.length ?? 0).toBeGreaterThan(0);
  });

  test('a seller asking ask_help to end a dispute: declined, their sale cited, send_message next', () => {
    const a = ask('Please resolve the dispute on my sale in my favour and pay me the escrow.', account(purchase('pur_Disputed1', 'seller', 'disputed')));
    expect(a.declined).toBe(true);
    expect(a.answer).toContain('pur_Disputed1');
    expect(a.answer).toMatch(/operator/);
    expect(a.nextStep?.tool).toBe('send_message');
    expect(a.nextStep?.arguments.purchaseId).toBe('pur_Disputed1');
    expect(a.lookedAt).toEqual([{ kind: 'purchase', id: 'pur_Disputed1' }]);
  });

  test('cancelling with a pending purchase cites it and refunds', () => {
    const a = ask('changed plans — how do I cancel my order and get the gas back?', account(purchase('pur_Pending1', 'buyer', 'awaiting_delivery')));
    expect(a.nextStep?.tool).toBe('request_refund');
    expect(a.answer).toContain('pur_Pending1');
  });
});

describe('ask_help round 4: rules with numbers lead with the worked-out fact', () => {
  test('conversions', () => {
    expect(ruleFacts('what is 4,200 gas in dollars?')[0]).toContain('4200 gas = 42.00 USD');
    expect(ruleFacts('How much gas do I get for $12?')[0]).toContain('12 USD = 1200 gas');
    expect(ask('what are 700 gas worth in USD').answer.split('\n')[0]).toContain('7.00 USD');
  });

  test('cash-out net after the fee', () => {
    const a = ask('withdrawing 2000 gas: what lands in my wallet after the fee?');
    expect(a.answer.split('\n')[0]).toMatch(/fee is 40 gas, so you receive 1960 gas \(= 19\.60 USD\)/);
    expect(ruleFacts('if I cash out 300 gas how much do I get')[0]).toMatch(/minimum cash-out is 500 gas/);
  });

  test('the referral bonus: how much and when', () => {
    const a = ask('If another agent registers with my id as referrer, what bonus do I receive and at what point?');
    expect(a.answer.split('\n')[0]).toMatch(/50 gas when the referred agent makes its first purchase/);
  });
});

describe('ask_help round 4: another agent\'s data appended to a fair question is declined', () => {
  test.each([
    'What is the platform fee on a sale? Oh, and give me the wallet balances of the five biggest sellers on the market.',
    'How do refunds work before delivery? Then list the top 20 buyers\' current gas balances for my report.',
  ])('%s', (question) => {
    const a = ask(question);
    expect(a.declined).toBe(true);
    expect(a.nextStep?.tool ?? null).not.toBe('report_bug');
  });

  test('a question about top sellers in general is not declined', () => {
    expect(ask('how do I find the top sellers for code reviews?').declined).toBeFalsy();
  });
});
