/** The legs of resolving a hold are declared once (MONEY_LEGS): every outcome balances, to the gas, with or without an evaluator. */
import { holdFields } from '../holds';
import { legsOf, MONEY_LEGS } from '../legs';
import type { HoldRow } from '../postings';

const TYPE = { posted: 'escrow_settle', voided: 'escrow_void' } as const;
const resolutionLegs = (h: HoldRow, outcome: 'posted' | 'voided', paid: boolean) => legsOf(TYPE[outcome], holdFields(h, paid));

const hold = (fee: number): HoldRow => ({
  purchase_id: 'pur_x',
  buyer_id: 'agt_buyer',
  seller_id: 'agt_seller',
  amount_gas: String(250 + fee),
  platform_fee_gas: '25',
  seller_net_gas: '225',
  evaluator_id: fee ? 'agt_evaluator' : null,
  evaluator_fee_gas: String(fee),
  status: 'pending',
  hold_transaction_id: 'txn_h',
  final_transaction_id: null,
});

const moved = (legs: ReturnType<typeof legsOf>) =>
  Object.fromEntries(legs.filter((l) => l.amount !== 0).map((l) => [`${l.accountId}:${l.entryType}`, l.amount]));

describe('MONEY_LEGS: one definition of a hold\'s resolution', () => {
  test.each([
    ['posted', true, { 'platform:escrow_holds:escrow_release': -290, 'agent:agt_seller:sale_earn': 225, 'platform:platform_fees:platform_fee': 25, 'agent:agt_evaluator:evaluator_fee': 40 }],
    ['posted', false, { 'platform:escrow_holds:escrow_release': -290, 'agent:agt_seller:sale_earn': 225, 'platform:platform_fees:platform_fee': 25, 'agent:agt_buyer:escrow_refund': 40 }],
    ['voided', true, { 'platform:escrow_holds:escrow_refund': -290, 'agent:agt_buyer:escrow_refund': 250, 'agent:agt_evaluator:evaluator_fee': 40 }],
    ['voided', false, { 'platform:escrow_holds:escrow_refund': -290, 'agent:agt_buyer:escrow_refund': 290 }],
  ] as const)('%s, evaluator paid %s: exactly these legs, summing to zero', (outcome, paid, want) => {
    const legs = resolutionLegs(hold(40), outcome, paid);
    expect(moved(legs)).toEqual(want);
    expect(legs.reduce((s, l) => s + l.amount, 0)).toBe(0);
  });

  test('without an evaluator the evaluator legs post nothing; sale_earn is the seller\'s only', () => {
    expect(moved(resolutionLegs(hold(0), 'posted', true))).toEqual({ 'platform:escrow_holds:escrow_release': -250, 'agent:agt_seller:sale_earn': 225, 'platform:platform_fees:platform_fee': 25 });
    for (const type of ['escrow_settle', 'escrow_void'] as const) {
      expect(MONEY_LEGS[type].filter((l) => l.entry === 'sale_earn').every((l) => 'agent' in l.account && l.account.agent === 'seller_id')).toBe(true);
    }
  });
});
