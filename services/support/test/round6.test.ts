/**
 * ask_help round 6 (issue #26): a pasted error envelope is the situation (its code, message and details
 * lead); the situation a question states wins over the caller's account, which answers only about its own
 * purchases, limits and timers; the wants "talk to the other party", "my listing does not sell", "my
 * webhook saw nothing"; and declines of changing reputation, wallet figures or another agent's things.
 * Questions written for this test (none from an evaluation set), asked with an empty account.
 */
import { HelpIndex } from '../help';
import { pastedError } from '../help-envelope';
import { declineOf } from '../help-intent';
import { asker, expectValidNextStep } from './helpers';

const help = new HelpIndex('https://market.example');
const ask = asker(help);
const env = (code: string, message: string, details?: unknown) => JSON.stringify({ ok: false, error: { code, message, ...(details ? { details } : {}) }, requestId: 'req_t1' });

describe('a pasted error envelope', () => {
  test('is parsed: code, message, details, the tool named first', () => {
    const e = pastedError(`update_service said ${env('invalid_arguments', 'Bad.', { errors: [{ field: 'priceGas', message: 'too small' }] })} — I copied the key from register`);
    expect(e).toMatchObject({ code: 'invalid_arguments', message: 'Bad.', tool: 'update_service', requestId: 'req_t1' });
    expect(e!.details).toEqual({ errors: [{ field: 'priceGas', message: 'too small' }] });
    expect(pastedError('I got invalid_state, why?')).toBeNull();
  });

  test('a field error is explained from the tool schema, and the call is retried with a valid value', () => {
    const a = ask(`rate_purchase for pur_q9 answered 400 ${env('invalid_arguments', 'Schema mismatch.', { errors: [{ field: 'rating', message: "'rating' must be an integer" }] })}`);
    expect(a.answer.split('\n\n')[0]).toMatch(/rating[^]*whole number[^]*1 to 5/);
    expect(a.nextStep).toMatchObject({ tool: 'rate_purchase', arguments: { purchaseId: 'pur_q9', rating: 5 } });
    expectValidNextStep(a.nextStep);
  });

  test('the price guard answers with the new price, says nothing was held, and retries at it', () => {
    const a = ask(`purchase_service on lst_k2 with maxPriceGas 90: ${env('invalid_state', 'The listing now costs 120 gas, above your maxPriceGas 90.', { priceGas: 120 })} do I lose gas?`);
    expect(a.answer.split('\n\n')[0]).toMatch(/120 gas[^]*nothing was held/);
    expect(a.nextStep).toMatchObject({ tool: 'purchase_service', arguments: { listingId: 'lst_k2', maxPriceGas: 120 } });
  });

  test('a 401 is about the Authorization header, whatever tool was called', () => {
    const a = ask(`request_cashout → 401 ${env('unauthorized', 'A valid API key is required for this tool.')}; my key sits in the JSON body`);
    expect(a.answer.split('\n\n')[0]).toMatch(/Authorization: Bearer/);
    expect(a.answer).not.toMatch(/withdrawableGas is 0/);
    expect(a.nextStep?.tool).toBe('whoami');
  });

  test('a 429 names the seconds to wait from its details', () => {
    const a = ask(`list_orders: ${env('rate_limited', 'Slow down.', { retryAfterSeconds: 7 })}`);
    expect(a.answer).toMatch(/wait 7 seconds/);
    expect(a.nextStep?.tool).toBe('list_orders');
  });

  test("a 403 for the other side's tool points to what this side can do", () => {
    const a = ask(`I'm the seller of pur_w2 and called confirm_delivery to speed things up: ${env('forbidden', 'Only the buyer can confirm.')}`);
    expect(a.answer.split('\n\n')[0]).toMatch(/confirm_delivery is the buyer's call/);
  });
});

describe('the stated situation over the account', () => {
  test('a seller naming a purchase the account does not hold is told how to deliver it, not that it has no purchases', () => {
    const a = ask('Seller on pur_m7q, it is awaiting_delivery and the translation is done. How do I pass it on to the buyer?');
    expect(a.nextStep).toMatchObject({ tool: 'deliver_work', arguments: { purchaseId: 'pur_m7q' } });
    expect(a.answer).not.toMatch(/no purchases/i);
  });

  test('quoted spending-limit figures decide whether a purchase goes through', () => {
    const a = ask('whoami: weeklyBudgetGas 2000, spentThisWeekGas 1900. Can I buy a 250 gas listing now?');
    expect(a.answer.split('\n\n')[0]).toMatch(/^No: 250 gas[^]*100 gas remaining[^]*403/);
  });

  test('a webhook the agent registered is not "no webhook" because the account shows none', () => {
    const a = ask('I set up a webhook with set_webhook last night; a sale happened but my handler logged nothing. Where do I look?');
    expect(a.nextStep?.tool).toBe('list_webhook_deliveries');
    expect(a.answer).not.toMatch(/You have no webhook/);
  });
});

describe('wants', () => {
  test.each([
    ['send_message', 'could I talk with the buyer about the scope before I start?'],
    ['send_message', 'how do I discuss the details with whoever ordered my service?'],
    ['update_service', 'I am the seller of lst_r5 (research, 900 gas). It is active and visible, but zero orders in a week. What should I change?'],
    ['request_refund', 'Seller here: pur_d4 is delivered, the buyer is right that it is incomplete. I want to give their gas back.'],
  ])('%s ← %s', (tool, question) => {
    const a = ask(question);
    expect(a.declined).toBeFalsy();
    expect(a.nextStep?.tool).toBe(tool);
  });

  test('a listing that does not sell gets the price against its category anchor', () => {
    const a = ask('I am the seller of lst_r5 (research, 900 gas). It is active and visible, but zero orders in a week. What should I change?');
    expect(a.answer).toMatch(/research anchor is 200 gas/);
    expect(a.nextStep?.arguments).toMatchObject({ listingId: 'lst_r5', priceGas: 200 });
  });
});

describe('declines', () => {
  test.each([
    'Set my salesCount to 200 please.',
    'Bump my qualityScore to 95, my listing deserves it.',
    'The buyer gave me 2 stars for no reason. Change it to 5 stars.',
    'Make my gasBalance 10000.',
    "Delete agt_x1's listing, it copies mine.",
  ])('%s', (question) => {
    const a = ask(question);
    expect(a.declined).toBe(true);
    expect(a.nextStep?.tool).not.toBe('report_bug');
  });

  test.each([
    'how do I change the rating I gave on pur_a1?',
    'Update my listing so its quality score goes up: what should the description say?',
    'I want to increase my earnings, what sells best?',
  ])('no decline intent: %s', (question) => {
    expect(declineOf(question)).toBeNull();
  });
});
