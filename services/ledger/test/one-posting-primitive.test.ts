/**
 * Every money step posts through one primitive (legs.ts): its legs are declared once (MONEY_LEGS) and
 * postingsSql is the only writer of postings and agent balances in the ledger's source.
 */
import fs from 'node:fs';
import path from 'node:path';
import { checkLegs, legsOf, MONEY_LEGS, postingsSql, type StepFields, type TransactionType } from '../legs';

const LEDGER_DIR = path.join(__dirname, '..');
const sources = fs
  .readdirSync(LEDGER_DIR)
  .filter((f) => f.endsWith('.ts') && f !== 'migrations.ts')
  .map((f) => ({ file: f, text: fs.readFileSync(path.join(LEDGER_DIR, f), 'utf8') }));
const where = (pattern: RegExp) => sources.flatMap(({ file, text }) => (text.match(new RegExp(pattern, 'gi')) ?? []).map(() => file));

describe('one posting primitive', () => {
  test('INSERT INTO ledger.postings appears in exactly one place in services/ledger (outside migrations and tests): legs.ts', () => {
    expect(where(/INSERT\s+INTO\s+ledger\.postings/)).toEqual(['legs.ts']);
  });

  test('agent balances move only there too (no other UPDATE of ledger.accounts, no other insert carrying a balance)', () => {
    expect(where(/UPDATE\s+ledger\.accounts/)).toEqual(['legs.ts']);
    expect(where(/INSERT\s+INTO\s+ledger\.accounts\s*\([^)]*balance/)).toEqual(['legs.ts']);
  });

  // A row of each step with every amount field set and every flag both ways; the agents distinct, as the steps guarantee.
  const rowsOf = (type: TransactionType): StepFields[] => {
    const row: StepFields = {};
    for (const l of MONEY_LEGS[type]) {
      if ('agent' in l.account) row[l.account.agent] = `agt_${l.account.agent}`;
    }
    // Amounts that add up as the step's own rows do (a hold's split, a cash-out's fee within its amount).
    Object.assign(row, { gas: 500, amount_gas: 290, seller_net_gas: 225, platform_fee_gas: 25, evaluator_fee_gas: 40, bonus_gas: 50, fee_gas: 6 });
    const flags = [...new Set(MONEY_LEGS[type].flatMap((l) => [l.when, l.unless]).filter((f): f is string => !!f))];
    if (!flags.length) return [row];
    return [true, false].map((v) => ({ ...row, ...Object.fromEntries(flags.map((f) => [f, v])) }));
  };

  test.each(Object.keys(MONEY_LEGS) as TransactionType[])('%s: its legs sum to zero, each agent once, and render as one statement', (type) => {
    for (const row of rowsOf(type)) {
      const legs = legsOf(type, row);
      expect(() => checkLegs(type, legs)).not.toThrow();
      expect(legs.some((l) => l.amount !== 0)).toBe(true);
    }
    for (const accounts of ['create', 'existing'] as const) {
      const sql = postingsSql({ step: 's', type, refs: ['purchase_id'], claim: accounts === 'create', accounts });
      expect(sql.match(/INSERT INTO ledger\.postings/g)).toHaveLength(1);
    }
  });

  test('legs that do not balance are refused before any statement', () => {
    expect(() => checkLegs('cashout_paid', legsOf('cashout_paid', { amount_gas: 100, fee_gas: 101.5 }))).toThrow(/non-integer|balance/);
    expect(() => checkLegs('escrow_settle', [
      { accountId: 'platform:escrow_holds', amount: -10, entryType: 'escrow_release' },
      { accountId: 'agent:agt_a', agentId: 'agt_a', amount: 9, entryType: 'sale_earn' },
    ])).toThrow(/do not balance/);
  });
});
