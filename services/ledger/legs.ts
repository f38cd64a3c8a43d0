/**
 * The legs of every money step, declared once as data, and the one primitive that turns them into postings.
 *
 * A step's legs (MONEY_LEGS) name fields of the step's row — the agents and the amounts — so the same
 * declaration is evaluated on a row in JS (legsOf: checks, errors, tests) and rendered as SQL over a relation
 * of rows (postingsSql): one row for a step's own statement or its stepwise path, many for a batch. postingsSql
 * is the only writer of ledger.postings; every path of every step (one statement, stepwise, batched) posts
 * through it:
 *
 *   legs      the step's legs over each row, zero legs dropped
 *   ready     the transactions to post ('existing' accounts: those whose credited agents have an account)
 *   debited   a step that debits (one agent at most): the debit, only if the balance covers it (balance +
 *             amount >= 0, on top of the CHECK)
 *   ok        the transactions posted: those whose debit went through, or every ready one of a crediting step
 *   credited  a step that credits agents: the credits; a first credit opens the account
 *   moved     each agent leg's balance after it
 *   claim     the transaction rows (one-statement paths; the stepwise path claimed its key before)
 *   posted    the postings: platform legs carry no balance (platform balances are their postings)
 */
import type { Queryable } from '../../packages/db';
import type { EntryType } from '../../packages/contracts/ledger';
import { agentAccount, ensureAgentAccount, insufficientGas, PLATFORM, type Refs } from './postings';

/** The ledger transaction types, one per money step. */
export type TransactionType =
  | 'gas_purchase'
  | 'escrow_hold'
  | 'escrow_settle'
  | 'escrow_void'
  | 'referral_bonus'
  | 'cashout'
  | 'cashout_paid'
  | 'cashout_returned';

/** A leg of a money step, as data over the fields of the step's row. */
export interface LegDecl {
  /** Whose account: the agent a field of the row names, or a platform account. */
  account: { agent: string } | { platform: keyof typeof PLATFORM };
  /** The gas moved: a field of the row, less another; -1 takes it out of the account. */
  amount: string;
  less?: string;
  sign: 1 | -1;
  entry: EntryType;
  /** Only when this boolean field of the row is true (`unless`: false); otherwise the leg moves 0 and posts nothing. */
  when?: string;
  unless?: string;
}

const plat = (platform: keyof typeof PLATFORM) => ({ platform });
const agent = (field: string) => ({ agent: field });

/**
 * The legs of each money step (rows: what the step's functions in money-steps.ts and holds.ts put in them).
 * An agent appears at most once per step, and a step debits at most one agent (so a refused debit leaves
 * nothing half-moved in a statement that commits).
 *
 *   escrow_settle  escrow_holds → seller (the held net) + platform_fees (the held fee) + the evaluator's leg
 *   escrow_void    escrow_holds → buyer (the price) + the evaluator's leg
 * The evaluator's leg: its fee as evaluator_fee when it gave a verdict (`evaluator_paid`), else back to the
 * buyer (escrow_refund); without an evaluator the fee is 0 and posts nothing.
 */
export const MONEY_LEGS: Record<TransactionType, LegDecl[]> = {
  gas_purchase: [
    { account: plat('cardIssuance'), amount: 'gas', sign: -1, entry: 'gas_purchase' },
    { account: agent('agent_id'), amount: 'gas', sign: 1, entry: 'gas_purchase' },
  ],
  escrow_hold: [
    { account: agent('buyer_id'), amount: 'amount_gas', sign: -1, entry: 'escrow_hold' },
    { account: plat('escrowHolds'), amount: 'amount_gas', sign: 1, entry: 'escrow_hold' },
  ],
  escrow_settle: [
    { account: plat('escrowHolds'), amount: 'amount_gas', sign: -1, entry: 'escrow_release' },
    { account: agent('seller_id'), amount: 'seller_net_gas', sign: 1, entry: 'sale_earn' },
    { account: plat('platformFees'), amount: 'platform_fee_gas', sign: 1, entry: 'platform_fee' },
    { account: agent('evaluator_id'), amount: 'evaluator_fee_gas', sign: 1, entry: 'evaluator_fee', when: 'evaluator_paid' },
    { account: agent('buyer_id'), amount: 'evaluator_fee_gas', sign: 1, entry: 'escrow_refund', unless: 'evaluator_paid' },
  ],
  escrow_void: [
    { account: plat('escrowHolds'), amount: 'amount_gas', sign: -1, entry: 'escrow_refund' },
    { account: agent('buyer_id'), amount: 'amount_gas', less: 'evaluator_fee_gas', sign: 1, entry: 'escrow_refund', when: 'evaluator_paid' },
    { account: agent('evaluator_id'), amount: 'evaluator_fee_gas', sign: 1, entry: 'evaluator_fee', when: 'evaluator_paid' },
    { account: agent('buyer_id'), amount: 'amount_gas', sign: 1, entry: 'escrow_refund', unless: 'evaluator_paid' },
  ],
  referral_bonus: [
    { account: plat('referralBonuses'), amount: 'bonus_gas', sign: -1, entry: 'referral_bonus' },
    { account: agent('referrer_id'), amount: 'bonus_gas', sign: 1, entry: 'referral_bonus' },
  ],
  cashout: [
    { account: agent('agent_id'), amount: 'amount_gas', sign: -1, entry: 'cashout' },
    { account: plat('payoutsPending'), amount: 'amount_gas', sign: 1, entry: 'cashout' },
  ],
  cashout_paid: [
    { account: plat('payoutsPending'), amount: 'amount_gas', sign: -1, entry: 'cashout_paid' },
    { account: plat('payoutsPaid'), amount: 'amount_gas', less: 'fee_gas', sign: 1, entry: 'cashout_paid' },
    { account: plat('platformFees'), amount: 'fee_gas', sign: 1, entry: 'platform_fee' },
  ],
  cashout_returned: [
    { account: plat('payoutsPending'), amount: 'amount_gas', sign: -1, entry: 'cashout_returned' },
    { account: agent('agent_id'), amount: 'amount_gas', sign: 1, entry: 'cashout_returned' },
  ],
};

/** A money step's row: the fields its legs name (agent ids, integer gas, flags). */
export type StepFields = Record<string, string | number | boolean | null | undefined>;

/** A leg evaluated on a row. */
export interface Leg {
  accountId: string;
  /** Set for agent accounts (created on a first credit). */
  agentId?: string;
  amount: number;
  entryType: EntryType;
}

const applies = (l: LegDecl, row: StepFields) => (l.when === undefined || row[l.when] === true) && (l.unless === undefined || row[l.unless] !== true);

/** The legs of `type` evaluated on `row` (zero legs included: they post nothing). */
export function legsOf(type: TransactionType, row: StepFields): Leg[] {
  return MONEY_LEGS[type].map((l) => {
    const gas = applies(l, row) ? Number(row[l.amount] ?? 0) - Number(l.less ? (row[l.less] ?? 0) : 0) : 0;
    const amount = l.sign * gas;
    if ('platform' in l.account) return { accountId: PLATFORM[l.account.platform], amount, entryType: l.entry };
    const agentId = row[l.account.agent];
    if (amount !== 0 && typeof agentId !== 'string') throw new Error(`${type}: the leg to ${l.account.agent} has no agent`);
    return { accountId: agentAccount(String(agentId)), ...(typeof agentId === 'string' ? { agentId } : {}), amount, entryType: l.entry };
  });
}

/** The checks every set of legs passes before it is posted: integer gas, summing to zero, each agent once. */
export function checkLegs(type: TransactionType, legs: Leg[]): void {
  const moving = legs.filter((l) => l.amount !== 0);
  for (const l of moving) if (!Number.isSafeInteger(l.amount)) throw new Error(`${type}: non-integer gas amount ${l.amount}`);
  const sum = moving.reduce((s, l) => s + l.amount, 0);
  if (sum !== 0) throw new Error(`${type}: the legs do not balance (${sum})`);
  const agents = moving.filter((l) => l.agentId).map((l) => l.accountId);
  if (new Set(agents).size !== agents.length) throw new Error(`${type}: an agent appears twice in one transaction`);
}

// ---------------------------------------------------------------------------------------------
// Rendering the legs as SQL, and posting them
// ---------------------------------------------------------------------------------------------

const NAME = /^[a-z_]+$/;
const column = (row: string, field: string) => {
  if (!NAME.test(field)) throw new Error(`not a field name: ${field}`);
  return `${row}.${field}`;
};

/** The fields a step's legs read, with their SQL types (for a row sent as JSON). */
export function fieldsOf(type: TransactionType): Record<string, 'text' | 'bigint' | 'boolean'> {
  const fields: Record<string, 'text' | 'bigint' | 'boolean'> = {};
  for (const l of MONEY_LEGS[type]) {
    if ('agent' in l.account) fields[l.account.agent] = 'text';
    fields[l.amount] = 'bigint';
    if (l.less) fields[l.less] = 'bigint';
    if (l.when) fields[l.when] = 'boolean';
    if (l.unless) fields[l.unless] = 'boolean';
  }
  return fields;
}

/** One leg as a SQL VALUES row over the step row `s`: (account, agent_id, amount, entry_type). */
function legValuesSql(l: LegDecl, s: string): string {
  const gas = l.less ? `(${column(s, l.amount)} - ${column(s, l.less)})` : column(s, l.amount);
  // IS TRUE / IS NOT TRUE: a null flag reads as false, as in legsOf.
  const condition = [l.when ? `${column(s, l.when)} IS TRUE` : null, l.unless ? `${column(s, l.unless)} IS NOT TRUE` : null].filter(Boolean).join(' AND ');
  const amount = `${l.sign < 0 ? '-' : ''}${condition ? `CASE WHEN ${condition} THEN ${gas} ELSE 0 END` : gas}`;
  const [account, agentId] =
    'platform' in l.account ? [`'${PLATFORM[l.account.platform]}'`, 'NULL::text'] : [`'agent:' || ${column(s, l.account.agent)}`, column(s, l.account.agent)];
  return `(${account}, ${agentId}, (${amount})::bigint, '${l.entry}')`;
}

/** The transaction's references a step's row may carry (the other columns of its postings are the legs'). */
export type RefColumn = 'purchase_id' | 'session_id' | 'cashout_id';

export interface PostingsSpec {
  /** A relation (a CTE before these) with one row per transaction: `id`, `created_at`, its `refs`, the fields of its legs, and `key`, `fingerprint` when it is claimed here. */
  step: string;
  type: TransactionType;
  refs: RefColumn[];
  /** Insert the transaction rows too (one-statement paths); the stepwise path claimed its key before. */
  claim: boolean;
  /**
   * 'create': a first credit opens the agent's account in the statement (two first credits racing fail one
   * statement whole on the agent_id index: its caller takes the stepwise path). 'existing': a transaction
   * crediting an agent with no account moves nothing (postLegs opens it and posts again) — inside a
   * transaction, where a failed statement would abort everything before it.
   */
  accounts: 'create' | 'existing';
}

/**
 * THE posting primitive: the CTEs (after `WITH <step> AS (…),`) that post the legs of `type` for every row
 * of `spec.step`, each row its own ledger transaction. The caller's final SELECT reads `ok` (the
 * transactions posted) and `moved` (tx, account id, balance after) — nothing else writes ledger.postings.
 */
export function postingsSql(spec: PostingsSpec): string {
  const s = 'legs_step';
  const refs = (['purchase_id', 'session_id', 'cashout_id'] as const).map((r) => `${spec.refs.includes(r) ? `${s}.${r}` : 'NULL::text'} AS ${r}`).join(', ');
  // A row is changed once per statement: a step debits one agent and credits none, or only credits agents.
  const agentLegs = MONEY_LEGS[spec.type].filter((l) => 'agent' in l.account);
  const debits = agentLegs.filter((l) => l.sign < 0).length;
  if (debits > 1 || (debits === 1 && agentLegs.length > 1)) throw new Error(`${spec.type}: a step debits one agent and credits none, or only credits agents`);
  const agentLeg = 'l.agent_id IS NOT NULL';
  const ready =
    spec.accounts === 'existing'
      ? `SELECT ${s}.id FROM ${spec.step} ${s}
        WHERE NOT EXISTS (SELECT 1 FROM legs l WHERE l.tx = ${s}.id AND ${agentLeg} AND l.amount > 0
                             AND NOT EXISTS (SELECT 1 FROM ledger.accounts a WHERE a.id = l.account))`
      : `SELECT ${s}.id FROM ${spec.step} ${s}`;
  // With its one debit, a transaction is posted only if the debit went through; a crediting one always is.
  const moves = debits
    ? `debited AS (
       UPDATE ledger.accounts a SET balance = a.balance + l.amount
         FROM legs l JOIN ready ON ready.id = l.tx
        WHERE a.id = l.account AND ${agentLeg} AND l.amount < 0 AND a.balance + l.amount >= 0
          -- the accounts by their key, whatever the planner guesses of a JSON parameter's rows
          AND a.id = ANY (ARRAY(SELECT l.account FROM legs l WHERE ${agentLeg} AND l.amount < 0))
       RETURNING l.tx, a.id, a.balance),
     ok AS (SELECT tx AS id FROM debited),
     moved AS (SELECT tx, id, balance FROM debited),`
    : `ok AS (SELECT id FROM ready),
     credited AS (
       INSERT INTO ledger.accounts (id, kind, agent_id, balance)
       SELECT l.account, 'agent', l.agent_id, l.amount FROM legs l JOIN ok ON ok.id = l.tx
        WHERE ${agentLeg} AND l.amount > 0 ORDER BY l.account
       ON CONFLICT (id) DO UPDATE SET balance = ledger.accounts.balance + EXCLUDED.balance
       RETURNING id, balance),
     moved AS (SELECT l.tx, c.id, c.balance FROM credited c JOIN legs l ON l.account = c.id AND l.amount > 0),`;
  const claim = spec.claim
    ? `
     claim AS (
       INSERT INTO ledger.transactions (id, key, type, fingerprint, purchase_id, session_id, cashout_id, created_at)
       SELECT ${s}.id, ${s}.key, '${spec.type}', ${s}.fingerprint, ${refs}, ${s}.created_at FROM ${spec.step} ${s} JOIN ok ON ok.id = ${s}.id),`
    : '';
  return `legs AS (
       SELECT ${s}.id AS tx, l.account, l.agent_id, l.amount, l.entry_type, ${refs}, ${s}.created_at
         FROM ${spec.step} ${s}
        CROSS JOIN LATERAL (VALUES ${MONEY_LEGS[spec.type].map((l) => legValuesSql(l, s)).join(',\n               ')}) AS l(account, agent_id, amount, entry_type)
        WHERE l.amount <> 0),
     ready AS (${ready}),
     ${moves}${claim}
     posted AS (
       INSERT INTO ledger.postings (transaction_id, account_id, amount, entry_type, balance_after, purchase_id, session_id, cashout_id, created_at)
       SELECT l.tx, l.account, l.amount, l.entry_type, m.balance, l.purchase_id, l.session_id, l.cashout_id, l.created_at
         FROM legs l JOIN ok ON ok.id = l.tx LEFT JOIN moved m ON m.tx = l.tx AND m.id = l.account)`;
}

/** The rows of a step sent as one JSON parameter: `SELECT … FROM jsonb_to_recordset($n)` with the step's columns. */
export function stepRowsSql(type: TransactionType, param: string, columns: Record<string, string> = {}, one = false): string {
  const all: Record<string, string> = { id: 'text', created_at: 'timestamptz', purchase_id: 'text', session_id: 'text', cashout_id: 'text', ...fieldsOf(type), ...columns };
  // jsonb_to_record: one row, and the planner knows it (a recordset is guessed at 100 rows).
  return `SELECT * FROM ${one ? 'jsonb_to_record' : 'jsonb_to_recordset'}(${param}::jsonb) AS r(${Object.entries(all).map(([c, t]) => `${c} ${t}`).join(', ')})`;
}

const stepwiseSql = new Map<TransactionType, string>();
function stepwiseStatement(type: TransactionType): string {
  let sql = stepwiseSql.get(type);
  if (!sql) {
    sql = `WITH step AS (${stepRowsSql(type, '$1', {}, true)}),
     ${postingsSql({ step: 'step', type, refs: ['purchase_id', 'session_id', 'cashout_id'], claim: false, accounts: 'existing' })}
     SELECT (SELECT count(*) FROM ready)::int AS ready, (SELECT count(*) FROM ok)::int AS ok,
            (SELECT COALESCE(jsonb_object_agg(id, balance), '{}'::jsonb) FROM moved) AS balances`;
    stepwiseSql.set(type, sql);
  }
  return sql;
}

/**
 * The stepwise path's posting (inside the step's database transaction, its key claimed): the legs of `type`
 * on `row`, in one statement. A debit the balance does not cover throws insufficient_gas (the caller's
 * transaction rolls back); a first credit opens the agent's account and posts again. Returns each agent's
 * balance after the transaction.
 */
export async function postLegs(tx: Queryable, type: TransactionType, transactionId: string, row: StepFields, refs: Refs, at: Date): Promise<Map<string, number>> {
  const legs = legsOf(type, row);
  checkLegs(type, legs);
  const step = { ...row, id: transactionId, created_at: at.toISOString(), purchase_id: refs.purchaseId ?? null, session_id: refs.sessionId ?? null, cashout_id: refs.cashoutId ?? null };
  for (let attempt = 0; ; attempt++) {
    const r = await tx.query<{ ready: number; ok: number; balances: Record<string, string> }>(stepwiseStatement(type), [JSON.stringify(step)]);
    const { ready, ok, balances } = r.rows[0];
    if (ok === 1) {
      return new Map(legs.filter((l) => l.agentId && l.amount !== 0).map((l) => [l.agentId!, Number(balances[l.accountId])]));
    }
    if (ready === 1) {
      const debit = legs.find((l) => l.agentId && l.amount < 0)!;
      throw await insufficientGas(tx, debit.agentId!, -debit.amount);
    }
    if (attempt > 0) throw new Error(`${type}: an account credited by ${transactionId} does not exist`);
    for (const l of legs) if (l.agentId && l.amount > 0) await ensureAgentAccount(tx, l.agentId);
  }
}
