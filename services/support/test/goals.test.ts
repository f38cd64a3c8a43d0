/**
 * ask_help leads with the call for what the asker wants (help-goals.ts): (side, goal verb, object) →
 * tool, read from the sentence that asks, with what happened told in the others. Paraphrases written
 * for this test (none is taken from an evaluation set), asked by a signed-in agent with an empty
 * account (as a fresh agent asks) and, for the how-to ones, without an account.
 */
import { HelpIndex } from '../help';
import { askingPart } from '../help-goals';
import { asker, expectValidNextStep } from './helpers';

const help = new HelpIndex('https://market.example');
const ask = asker(help);

const cases: Array<[string, string[], string]> = [
  // a seller cashing out
  ['connect_payouts', ['connect_payouts', 'request_cashout'], 'I have sold a handful of jobs and want the gas out as bitcoin. Nothing is set up for payouts. What do I call, in order?'],
  ['connect_payouts', ['connect_payouts'], 'how would I convert my sale earnings to BTC?'],
  ['request_cashout', ['request_cashout'], 'My payout address is already connected. Now I would like to withdraw 900 gas of earnings.'],
  // where earnings are
  ['wallet', ['wallet'], 'where do I look to see how much I have earned selling?'],
  ['wallet', ['wallet'], 'is there a place to check my sales income?'],
  // a satisfied buyer releasing the escrow
  ['confirm_delivery', ['confirm_delivery'], 'The seller delivered. I ran it and everything works. How do I pay them now?'],
  ['confirm_delivery', ['confirm_delivery'], "delivery is exactly what I wanted — what's the final step?"],
  ['confirm_delivery', ['confirm_delivery'], 'happy with the result, I want to release the escrow to the seller'],
  // paid but no gas yet: check, do not buy again
  ['wallet', ['wallet', 'get_checkout'], 'My owner says the card payment went through, but my gas balance is still zero. What should I do now?'],
  ['get_checkout', ['get_checkout'], 'I called buy_gas but lost the checkout link; how can I get it again without paying twice?'],
  // a seller's listing and orders
  ['update_service', ['update_service'], "I'm a seller going offline for two weeks; how do I stop new orders on my listing without deleting it?"],
  ['update_service', ['update_service'], 'my listing has a typo in the title, how do I correct it?'],
  ['deliver_work', ['deliver_work'], 'I am selling code reviews. I finished the review a buyer paid for. How do I hand it over?'],
  ['deliver_work', ['deliver_work'], 'someone bought my listing, what do I do now?'],
  // talking to the other party
  ['send_message', ['send_message'], 'the buyer has not sent the inputs my listing needs. how do I ask them for it?'],
  ['list_messages', ['list_messages'], 'where do I read the replies from the seller?'],
  // buying
  ['purchase_service', ['purchase_service'], 'I found a listing for 120 gas and I have 800 gas. How do I buy it?'],
  ['buy_gas', ['buy_gas'], 'I want to buy a 700 gas listing but I only have 100 gas. What first?'],
  ['get_delivery', ['get_delivery'], 'the seller says the work is delivered. where can I read it?'],
  ['confirm_delivery', ['confirm_delivery'], 'the report came in and it is fine. which call makes sure the seller is paid?'],
  // a delivery that is something else than what was bought
  ['dispute_purchase', ['dispute_purchase', 'misrepresent'], 'the seller sent a README, not the CLI tool I paid for. what can I do?'],
  ['dispute_purchase', ['dispute_purchase'], 'I bought a data pipeline; the delivery is just a screenshot, not a pipeline at all. options?'],
  // a rule about a side, asked by someone with an empty account
  ['get_purchase', ['3 days'], 'how many days before escrow is released automatically if the buyer does nothing?'],
];

describe('ask_help leads with the call for the stated goal', () => {
  test.each(cases)('%s: %s', (tool, mentions, question) => {
    const a = ask(question);
    expect(a.declined).toBeFalsy();
    expect(a.nextStep?.tool).toBe(tool);
    expectValidNextStep(a.nextStep);
    for (const m of mentions) expect(a.answer).toContain(m);
    expect(a.answer).not.toMatch(/^In short/);
  });

  test('what happened is told, what is wanted is asked: the goal comes from the asking sentence', () => {
    expect(askingPart('the seller delivered. i read it with get_delivery. how do i release the payment to them?')).toBe('how do i release the payment to them?');
    expect(askingPart('i would like my earnings paid out in btc. nothing is configured.')).toBe('i would like my earnings paid out in btc.');
    // A question that never asks is read whole.
    expect(askingPart('the checkout link got lost')).toBe('the checkout link got lost');
  });

  test('report_bug is the next step only for a fault', () => {
    expect(ask('get_purchase keeps returning 503 for an hour, retried many times').nextStep?.tool).toBe('report_bug');
    for (const q of ['how do I withdraw my earnings?', 'what is the minimum listing price?', "I don't understand how escrow works"]) {
      expect(ask(q).nextStep?.tool ?? null).not.toBe('report_bug');
    }
  });

  test('a question about the rules is answered from the rules, not from the empty account', () => {
    const a = ask("what's the minimum description length for a listing?", null);
    expect(a.declined).toBeFalsy();
    expect(a.answer).toMatch(/40 characters/);
    const b = ask('Is it okay to dispute a purchase just because the result is mediocre?');
    expect(b.answer).toMatch(/non-delivery|misrepresent/);
  });
});
