/**
 * ask_help reads the situation an agent describes before its keywords (help-lifecycle.ts): the calls
 * it made and what came back, the state it is in, its side and what it wants pick the next call from
 * one table; the state after a call comes from escrow's purchase machine; the figures the agent
 * quotes win over its own account's. Questions written for this test (none from an evaluation set).
 */
import type { HelpAccount } from '../../../packages/contracts/support';
import { HelpIndex } from '../help';
import { describe as describeSituation, describedMove } from '../help-lifecycle';
import { asker, expectValidNextStep, FRESH_ACCOUNT } from './helpers';

const help = new HelpIndex('https://market.example');
const fresh = FRESH_ACCOUNT;
const ask = asker(help);

describe('what the agent says happened', () => {
  it('takes the state a successful call leads to from the purchase machine, and the side from who may call it', () => {
    const d = describeSituation('I ran deliver_work on pur_a1 a minute ago, all fine.', 'unknown');
    expect(d.called).toEqual(['deliver_work']);
    expect(d.state).toBe('delivered');
    expect(d.side).toBe('seller');
  });

  it('a call answered with an error moves nothing; a call the other party has not made is not a call', () => {
    expect(describeSituation('deliver_work on pur_a1 returned 500 twice', 'unknown').state).toBeNull();
    expect(describeSituation("the buyer hasn't called confirm_delivery", 'seller').called).toEqual([]);
    expect(describeSituation('the seller ran deliver_work on pur_a2', 'unknown')).toMatchObject({ state: 'delivered', side: 'buyer' });
    expect(describeSituation("I'm going to call purchase_service soon", 'unknown').planned).toEqual(['purchase_service']);
  });

  it('a state word under a negation or in a supposition states no state', () => {
    expect(describeSituation("the seller hasn't delivered anything", 'buyer').state).toBeNull();
    expect(describeSituation('how long until my sale gets auto refunded?', 'seller').state).toBeNull();
  });

  it('reads quoted figures and an endpoint status', () => {
    const d = describeSituation('list_webhook_deliveries: lastStatusCode 404 after 5 attempts; withdrawableGas 20', 'unknown');
    expect(d.endpointStatus).toBe(404);
    expect(d.figures.get('withdrawablegas')).toBe(20);
  });

  it('describes nothing for a plain rule question (the keywords decide then)', () => {
    expect(describedMove('how much is the platform fee?', 'unknown', null)).toBeNull();
  });
});

describe('the next call comes from (situation, want)', () => {
  const cases: Array<[string, string, string[]]> = [
    ['rate_purchase', 'confirm_delivery said ok and the purchase is completed now. Is that all?', ['rate_purchase']],
    ['search_services', 'Already gave 5 stars with rate_purchase on the completed pur_r2. Anything left?', ['7 days']],
    ['send_message', 'Seller here. deliver_work succeeded on pur_s3 two days ago; can I speed up getting paid?', ['auto-release', 'confirm_delivery']],
    ['request_refund', 'I am the buyer; pur_b4 is still awaiting_delivery after a week and I want the money back.', ['request_refund']],
    ['dispute_purchase', 'As the buyer: pur_c5 shows delivered but the files are placeholders. What now?', ['dispute_purchase']],
    ['confirm_delivery', 'Buyer: get_delivery on pur_c6 returned the code and it works. What is the next call?', ['confirm_delivery']],
    ['get_purchase', 'purchase_service came back awaiting_approval; can this go any faster?', ['approvalUrl']],
    ['purchase_service', 'Before I buy lst_m9 at 80 gas: how do I avoid paying more if the price goes up?', ['maxPriceGas', '80']],
    ['list_webhook_deliveries', 'My webhook handler answers 404 according to list_webhook_deliveries. Why?', ['2xx', 'route']],
    ['connect_payouts', 'request_cashout was refused: payouts not connected, with withdrawableGas 900. What now?', ['connect_payouts']],
    ['register', 'What does referredBy do when I register?', ['50', 'first purchase']],
    ['send_message', 'dispute_purchase on pur_e7 went through. What should I do now?', ['operator']],
    ['wallet', 'It says refunded on pur_f8 after my request_refund. How do I check the gas came back?', ['gasBalance']],
    ['get_delivery', 'the seller called deliver_work on pur_g9 an hour ago. anything I must do?', ['confirm_delivery']],
  ];
  it.each(cases)('%s ← %s', (tool, question, mentions) => {
    const a = ask(question);
    expect(a.nextStep?.tool).toBe(tool);
    expectValidNextStep(a.nextStep);
    for (const m of mentions) expect(a.answer).toContain(m);
    // The call leads (after a worked-out rule fact, if any).
    expect(a.answer.indexOf(tool === 'search_services' ? 'rate_purchase' : tool)).toBeLessThan(400);
  });

  it('the figures the agent states win over its own account', () => {
    const rich = { ...fresh, wallet: { gasBalance: 9000, heldGas: 0, withdrawableGas: 4000, pendingEarningsGas: 0, lifetimeEarnedGas: 4000 } } as unknown as HelpAccount;
    const a = ask('wallet: pendingEarningsGas 120, withdrawableGas 0. request_cashout refused. why?', rich);
    expect(a.answer).toContain('withdrawableGas is 0');
    expect(a.answer).toContain('500');
    expect(a.answer).not.toContain('4000');
  });

  it("fills a purchase the question leaves open from the caller's own account", () => {
    const mine = {
      ...fresh,
      purchases: [{ id: 'pur_own1', role: 'buyer', status: 'awaiting_delivery', listingTitle: 'x', priceGas: 100, createdAt: '2026-11-20T00:00:00Z' }],
    } as unknown as HelpAccount;
    const a = ask('buyer: still awaiting_delivery, I want a refund', mine);
    expect(a.nextStep).toMatchObject({ tool: 'request_refund', arguments: { purchaseId: 'pur_own1' } });
    expect(a.lookedAt).toContainEqual({ kind: 'purchase', id: 'pur_own1' });
  });
});
