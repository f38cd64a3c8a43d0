/**
 * Payouts: connect_payouts, request_cashout / cash_out, and the operator's payout actions. Mixed into payments
 * (which provides this.db through its dbMixin; the tables are migrations 100+ of services/payments/migrations.ts).
 *
 * The ledger owns the money rule (withdrawable = min(gasBalance, lifetime sale_earn − cashed out or pending)) and
 * its atomic check. A cash-out row is written first as 'requested', then the ledger is called with the key
 * cashout:<id>:debit, then the row becomes 'pending' (or 'failed' when the ledger refused). Operator actions claim
 * the row first ('paying' / 'rejecting'), call the ledger keyed, then finish it. A row left in an intermediate
 * state by a crash or a timeout is finished by the sweeper, which repeats the same keyed ledger call.
 */
import type { Context, Service } from 'moleculer';
import { getAddressInfo, AddressType, Network } from 'bitcoin-address-validation';
import type { Db } from '../../packages/db';
import { rowView } from '../../packages/db/row-view';
import { ForbiddenError, InvalidArgumentsError, InvalidStateError, MarketError, NotFoundError } from '../../packages/errors';
import { newId } from '../../packages/ids';
import { cashoutSplit, DISPUTE_LOOKBACK_DAYS, gasToUsd, MIN_CASHOUT_GAS } from '../../packages/market-rules';
import type { RuntimeService, ServiceSchemaOf } from '../../packages/runtime';
import { toolParams } from '../../packages/tool-catalogue';
import { callLedger, LEDGER, type CashoutDebitParams, type LedgerActions } from '../../packages/contracts/ledger';
import { callEscrow, ESCROW } from '../../packages/contracts/escrow';
import { enqueueEvent } from '../../packages/outbox';
import { PAYMENTS_TOPICS, type CashoutFinished, type PayoutRecord, type PayoutStatus } from '../../packages/contracts/payments';
import type { RecordQuery } from '../../packages/contracts/ledger';
import { isoOrNull, recordPage, RECORD_QUERY_PARAMS } from '../../packages/ledger-audit/records';
import { requireAgent, type CallMeta } from '../../packages/tool-catalogue/meta';

export type CashoutStatus = PayoutStatus;
/** What agents see: the intermediate states are reported as the state they are leaving. */
export type PublicCashoutStatus = 'pending' | 'paid' | 'rejected';

/** A 'requested' row older than this whose request died is finished by the sweeper (longer than any request). */
const REQUESTED_GRACE_SECONDS = 60;
/** An operator claim ('paying'/'rejecting') older than this is finished by the sweeper. */
const CLAIM_GRACE_SECONDS = 30;
const SATS_PER_BTC = 100_000_000n;

interface CashoutRow {
  id: string;
  agent_id: string;
  amount_gas: number;
  fee_gas: number;
  net_gas: number;
  btc_address: string;
  btc_network: string;
  status: CashoutStatus;
  request_key: string | null;
  failure_reason: string | null;
  btc_txid: string | null;
  btc_amount_sats: string | null;
  reject_reason: string | null;
  operator: string | null;
  created_at: Date;
  updated_at: Date;
  paid_at: Date | null;
  rejected_at: Date | null;
}

interface AddressRow {
  agent_id: string;
  btc_address: string;
  btc_network: string;
  address_type: string;
  connected_at: Date;
}

export interface CashoutView {
  id: string;
  amountGas: number;
  feeGas: number;
  netGas: number;
  netUsd: number;
  status: PublicCashoutStatus;
  btcAddress: string;
  createdAt: string;
  paidAt: string | null;
  btcTxid: string | null;
  btcAmount: string | null;
  rejectedAt: string | null;
  rejectReason: string | null;
}

export interface OperatorCashoutView extends Omit<CashoutView, 'status'> {
  agentId: string;
  status: CashoutStatus;
  btcNetwork: string;
  operator: string | null;
  failureReason: string | null;
  updatedAt: string;
}

const COLUMNS = `id, agent_id, amount_gas, fee_gas, net_gas, btc_address, btc_network, status, request_key, failure_reason,
  btc_txid, btc_amount_sats, reject_reason, operator, created_at, updated_at, paid_at, rejected_at`;

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

export function formatSats(sats: bigint | string | null): string | null {
  if (sats === null) return null;
  const s = BigInt(sats);
  return `${s / SATS_PER_BTC}.${(s % SATS_PER_BTC).toString().padStart(8, '0')}`;
}

/** "0.00529", 0.00529 → 529000 sats; refuses more than 8 decimals, zero, negatives and junk. */
export function parseBtcAmount(input: unknown): bigint | null {
  const text = typeof input === 'number' ? (Number.isFinite(input) ? input.toFixed(8) : '') : typeof input === 'string' ? input.trim() : '';
  const m = /^(\d{1,8})(?:\.(\d{1,8}))?$/.exec(text);
  if (!m) return null;
  const sats = BigInt(m[1]) * SATS_PER_BTC + BigInt((m[2] ?? '').padEnd(8, '0'));
  return sats > 0n ? sats : null;
}

function publicStatus(status: CashoutStatus): PublicCashoutStatus {
  if (status === 'paid') return 'paid';
  if (status === 'rejected') return 'rejected';
  return 'pending';
}

function toView(row: CashoutRow): CashoutView {
  return {
    ...rowView(row, ['id', 'amount_gas', 'fee_gas', 'net_gas', 'btc_address', 'created_at', 'paid_at', 'btc_txid', 'rejected_at', 'reject_reason']),
    netUsd: gasToUsd(row.net_gas),
    status: publicStatus(row.status),
    btcAmount: formatSats(row.btc_amount_sats),
  };
}

/** The operator sees the state as it is, and the bookkeeping columns. */
function toOperatorView(row: CashoutRow): OperatorCashoutView {
  return { ...toView(row), ...rowView(row, ['agent_id', 'status', 'btc_network', 'operator', 'failure_reason', 'updated_at']) };
}

/** A refusal by the other service (it answered and said no), as opposed to a timeout or an unreachable service. */
function isDefinitiveRefusal(err: unknown): boolean {
  const type = (err as { type?: string })?.type;
  return typeof type === 'string' && ['invalid_state', 'insufficient_gas', 'invalid_arguments', 'not_found', 'forbidden'].includes(type);
}

/** Operator actions are reached only through /api/admin (which sets meta.operator) or trusted internal callers. */
function requireOperator(ctx: { meta: unknown }): string {
  const meta = ctx.meta as CallMeta;
  if (meta.internal !== true && !meta.operator) throw new ForbiddenError('Only operators can do this.', { hint: 'Use the admin API (/api/admin) or npm run admin.' });
  return meta.operator ?? 'operator';
}

const ACCEPTED_TYPES = new Set<string>([AddressType.p2pkh, AddressType.p2sh, AddressType.p2wpkh, AddressType.p2wsh, AddressType.p2tr]);

/** Checks the checksum (base58check or bech32/bech32m), the network and the script type. */
/**
 * Addresses published as examples and test vectors, whose private keys are public (BIP-173 and
 * BIP-350 examples; the key 1's P2PKH/P2WPKH forms): anyone can spend what is paid to them, so
 * connect_payouts refuses them (issue #23). Compared case-insensitively for bech32.
 */
export const TEST_VECTOR_ADDRESSES: ReadonlySet<string> = new Set([
  'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
  'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx',
  'bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3',
  'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7',
  'bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y',
  'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0',
  'tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c',
  '1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH',
  '1EHNa6Q4Jz2uvNExL497mE43ikXhwF6kZm',
  'mrCDrCybB6J1vRfbwM5hemdJz73FwDBC8r',
]);

function isTestVector(address: string): boolean {
  return TEST_VECTOR_ADDRESSES.has(address) || (/^(bc|tb)1/i.test(address) && TEST_VECTOR_ADDRESSES.has(address.toLowerCase()));
}

export function validateBtcAddress(address: string, network: 'mainnet' | 'testnet'): { type: string } {
  if (isTestVector(address)) {
    throw new InvalidArgumentsError(`"${address}" is a published example address (a test vector): its private key is public, so anyone could take what is paid to it.`, {
      hint: 'Copy a receive address from your own wallet; never use an address from documentation or examples.',
      details: { field: 'btcAddress', rule: 'test_vector' },
    });
  }
  let info;
  try {
    info = getAddressInfo(address);
  } catch {
    throw new InvalidArgumentsError(`"${address}" is not a valid Bitcoin address (the checksum or format does not match).`, {
      hint: network === 'mainnet'
        ? 'Copy the receive address from your Bitcoin wallet exactly: it starts with bc1, 1 or 3.'
        : 'Copy a testnet receive address exactly: it starts with tb1, m, n or 2.',
      details: { field: 'btcAddress', rule: 'checksum' },
    });
  }
  const expected = network === 'mainnet' ? Network.mainnet : Network.testnet;
  if (info.network !== expected) {
    throw new InvalidArgumentsError(`"${address}" is a ${info.network} address; this marketplace pays on ${network}.`, {
      hint: network === 'mainnet' ? 'Send a mainnet address (bc1…, 1… or 3…).' : 'Send a testnet address (tb1…, m…, n… or 2…).',
      details: { field: 'btcAddress', rule: 'network', addressNetwork: info.network, network },
    });
  }
  if (!ACCEPTED_TYPES.has(info.type)) {
    throw new InvalidArgumentsError(`"${address}" is of an address type we cannot pay to.`, {
      hint: 'Use a standard address: P2WPKH/P2TR (bc1…), P2PKH (1…) or P2SH (3…).',
      details: { field: 'btcAddress', rule: 'type', type: info.type },
    });
  }
  return { type: info.type };
}

type PayoutsThis = Service & RuntimeService & {
  db: Db;
  payoutsTimer: NodeJS.Timeout | null;
  loadCashout(id: string): Promise<CashoutRow>;
  finishRequested(row: CashoutRow, ctx?: Context): Promise<CashoutRow>;
  finishPaying(row: CashoutRow, ctx?: Context): Promise<CashoutRow>;
  finishRejecting(row: CashoutRow, ctx?: Context): Promise<CashoutRow>;
  runCashoutSweep(): Promise<{ finished: number }>;
  finishWithNotice(cashoutId: string, sql: string, topic: string): Promise<CashoutRow | undefined>;
  relay?: { wake(): Promise<void> };
  callLedger<A extends keyof LedgerActions & string>(ctx: Context | undefined, action: A, params: LedgerActions[A]['params']): Promise<LedgerActions[A]['result']>;
};

export const payoutsMixin: Partial<ServiceSchemaOf<PayoutsThis>> = {
  actions: {
    /** Tool connect_payouts: set or replace the BTC address; every change is kept in payout_address_history. */
    connectPayouts: {
      params: toolParams('connect_payouts'),
      async handler(this: PayoutsThis, ctx: Context<{ btcAddress: string }, CallMeta>) {
        const agent = requireAgent(ctx);
        const { config } = this;
        const btcAddress = ctx.params.btcAddress.trim();
        const { type } = validateBtcAddress(btcAddress, config.btcNetwork);
        const result = await this.db.transaction(async (tx) => {
          const prev = await tx.query<AddressRow>(
            'SELECT agent_id, btc_address, btc_network, address_type, connected_at FROM payments.payout_addresses WHERE agent_id = $1 FOR UPDATE',
            [agent.id],
          );
          const previous = prev.rows[0] ?? null;
          if (previous && previous.btc_address === btcAddress && previous.btc_network === config.btcNetwork) {
            return { row: previous, previousAddress: null as string | null, changed: false };
          }
          const up = await tx.query<AddressRow>(
            `INSERT INTO payments.payout_addresses (agent_id, btc_address, btc_network, address_type)
             VALUES ($1, $2, $3, $4)
             ON CONFLICT (agent_id) DO UPDATE SET btc_address = EXCLUDED.btc_address, btc_network = EXCLUDED.btc_network,
               address_type = EXCLUDED.address_type, connected_at = now()
             RETURNING agent_id, btc_address, btc_network, address_type, connected_at`,
            [agent.id, btcAddress, config.btcNetwork, type],
          );
          await tx.query(
            `INSERT INTO payments.payout_address_history (agent_id, btc_address, btc_network, address_type, previous_address, request_id)
             VALUES ($1, $2, $3, $4, $5, $6)`,
            [agent.id, btcAddress, config.btcNetwork, type, previous?.btc_address ?? null, ctx.meta.requestId ?? null],
          );
          return { row: up.rows[0], previousAddress: previous?.btc_address ?? null, changed: true };
        });
        return {
          payouts: {
            btcAddress: result.row.btc_address,
            network: result.row.btc_network,
            addressType: result.row.address_type,
            connectedAt: iso(result.row.connected_at),
            replacedAddress: result.previousAddress,
          },
          next: 'Cash out sale earnings with request_cashout (minimum 500 gas, 2% fee). Cash-outs already pending keep the address they were requested with.',
        };
      },
    },

    /** Tool request_cashout / cash_out. */
    requestCashout: {
      params: toolParams('request_cashout'),
      async handler(this: PayoutsThis, ctx: Context<{ amountGas?: number }, CallMeta>) {
        const agent = requireAgent(ctx);
        const requestKey = ctx.meta.idempotencyKey ?? null;

        // A retry of the same request (same Idempotency-Key) gets the same cash-out, finished if it was left midway.
        if (requestKey) {
          const existing = await this.db.query<CashoutRow>(
            `SELECT ${COLUMNS} FROM payments.cashouts WHERE agent_id = $1 AND request_key = $2`,
            [agent.id, requestKey],
          );
          if (existing.rows[0] && existing.rows[0].status !== 'failed') {
            const row = existing.rows[0].status === 'requested' ? await this.finishRequested(existing.rows[0], ctx) : existing.rows[0];
            if (row.status !== 'failed') return { cashout: toView(row) };
          }
        }

        // 1. A payout address.
        const addr = await this.db.query<AddressRow>(
          'SELECT agent_id, btc_address, btc_network, address_type, connected_at FROM payments.payout_addresses WHERE agent_id = $1',
          [agent.id],
        );
        const address = addr.rows[0];
        if (!address) {
          throw new InvalidStateError('No payout address is connected, so there is nowhere to send the BTC.', {
            hint: 'Call connect_payouts {"btcAddress": "bc1…"} with your Bitcoin receive address, then request_cashout again.',
            details: { rule: 'payout_address_required' },
          });
        }
        const { config } = this;
        if (address.btc_network !== config.btcNetwork) {
          throw new InvalidStateError(`Your payout address is a ${address.btc_network} address; payouts are now made on ${config.btcNetwork}.`, {
            hint: `Call connect_payouts with a ${config.btcNetwork} address, then request_cashout again.`,
            details: { rule: 'payout_address_network' },
          });
        }

        // 2. A clean dispute history as a seller (docs/adr/0011-cash-out.md).
        const disputes = await callEscrow(ctx, ESCROW.disputeHistory, { sellerId: agent.id });
        if (disputes.openAsSeller > 0) {
          throw new InvalidStateError(`Cash-out is paused while you have ${disputes.openAsSeller} open dispute(s) as a seller.`, {
            hint: 'Settle the dispute first: list_orders {"role": "seller", "status": "disputed"}, talk to the buyer with send_message; an operator resolves it. Then request_cashout again.',
            details: { rule: 'no_open_dispute', openAsSeller: disputes.openAsSeller },
          });
        }
        if (disputes.lostLast90Days > 0) {
          throw new ForbiddenError(`Cash-out is blocked: you lost ${disputes.lostLast90Days} dispute(s) as a seller in the last ${DISPUTE_LOOKBACK_DAYS} days.`, {
            hint: `Cash-out opens again ${DISPUTE_LOOKBACK_DAYS} days after the last lost dispute; your gas stays spendable meanwhile. Contact the operator (report_bug) if you think the ruling was wrong.`,
            details: { rule: 'no_lost_dispute', lostLast90Days: disputes.lostLast90Days, lookbackDays: DISPUTE_LOOKBACK_DAYS },
          });
        }

        // 3. The amount: only sale earnings, at least the minimum. (The ledger re-checks atomically below.)
        const w = await callLedger(ctx,
          LEDGER.withdrawable,
          { agentId: agent.id },
        );
        const requested = ctx.params.amountGas;
        if (requested !== undefined && requested < MIN_CASHOUT_GAS) {
          throw new InvalidArgumentsError(`The minimum cash-out is ${MIN_CASHOUT_GAS} gas; you asked for ${requested}.`, {
            hint: w.withdrawableGas >= MIN_CASHOUT_GAS
              ? `Ask for at least ${MIN_CASHOUT_GAS} gas, or omit amountGas to cash out all ${w.withdrawableGas} withdrawable gas.`
              : `Keep selling: cash-out opens once ${MIN_CASHOUT_GAS} gas of sale earnings are withdrawable (now ${w.withdrawableGas}).`,
            details: { rule: 'minimum', minimumGas: MIN_CASHOUT_GAS, withdrawableGas: w.withdrawableGas, field: 'amountGas' },
          });
        }
        if (w.withdrawableGas < MIN_CASHOUT_GAS) {
          const onlySpendable = w.lifetimeEarnedGas - w.cashedOutGas <= 0;
          throw new InvalidStateError(
            onlySpendable
              ? 'Nothing is withdrawable: only sale earnings (sale_earn) can be cashed out; bought and bonus gas is spendable, not withdrawable.'
              : `Only ${w.withdrawableGas} gas is withdrawable; the minimum cash-out is ${MIN_CASHOUT_GAS} gas.`,
            {
              hint: onlySpendable
                ? 'Earn gas by selling: list_service, deliver_work, and the buyer\'s confirm_delivery credits your sale earnings. Spend bought gas with purchase_service.'
                : `Keep selling until ${MIN_CASHOUT_GAS} gas of earnings are withdrawable (wallet shows withdrawableGas).`,
              details: { rule: onlySpendable ? 'sale_earnings_only' : 'minimum', minimumGas: MIN_CASHOUT_GAS, withdrawableGas: w.withdrawableGas },
            },
          );
        }
        const amountGas = requested ?? w.withdrawableGas;
        if (amountGas > w.withdrawableGas) {
          throw new InvalidStateError(`You asked for ${amountGas} gas but only ${w.withdrawableGas} gas is withdrawable.`, {
            hint: `Omit amountGas to cash out all ${w.withdrawableGas} withdrawable gas (only sale earnings are withdrawable; bought and bonus gas is not).`,
            details: { rule: 'withdrawable', withdrawableGas: w.withdrawableGas, requestedGas: amountGas },
          });
        }

        // 4. Record the request, then move the gas to payouts-pending through the ledger's atomic check.
        const split = cashoutSplit(amountGas);
        const id = newId('csh');
        let inserted;
        try {
          inserted = await this.db.query<CashoutRow>(
            `INSERT INTO payments.cashouts (id, agent_id, amount_gas, fee_gas, net_gas, btc_address, btc_network, status, request_key)
             VALUES ($1, $2, $3, $4, $5, $6, $7, 'requested', $8) RETURNING ${COLUMNS}`,
            [id, agent.id, split.amountGas, split.feeGas, split.netGas, address.btc_address, address.btc_network, requestKey],
          );
        } catch (err) {
          if ((err as { code?: string }).code === '23505' && requestKey) {
            throw new InvalidStateError('A cash-out with this Idempotency-Key is already being processed.', {
              hint: 'Wait a moment and retry with the same Idempotency-Key, or check wallet for the cash-out.',
            });
          }
          throw err;
        }
        const row = await this.finishRequested(inserted.rows[0], ctx);
        if (row.status === 'failed') {
          throw new InvalidStateError(`The ledger refused the cash-out: ${row.failure_reason ?? 'more than withdrawable'}.`, {
            hint: 'Another cash-out or a purchase probably used this gas just now: check wallet (withdrawableGas) and request_cashout again.',
            details: { rule: 'withdrawable', cashoutId: row.id },
          });
        }
        return { cashout: toView(row) };
      },
    },

    /** Internal (wallet): the agent's cash-outs, newest first. */
    listCashouts: {
      params: { agentId: 'string', limit: { type: 'number', integer: true, min: 1, max: 200, optional: true } },
      async handler(this: PayoutsThis, ctx: Context<{ agentId: string; limit?: number }>) {
        const r = await this.db.query<CashoutRow>(
          `SELECT ${COLUMNS} FROM payments.cashouts WHERE agent_id = $1 AND status <> 'failed' ORDER BY created_at DESC, id DESC LIMIT $2`,
          [ctx.params.agentId, ctx.params.limit ?? 50],
        );
        return r.rows.map(toView);
      },
    },

    /** Internal (wallet / operator): the connected payout address of an agent, or null. */
    payoutAddress: {
      params: { agentId: 'string' },
      async handler(this: PayoutsThis, ctx: Context<{ agentId: string }>) {
        const r = await this.db.query<AddressRow>(
          'SELECT agent_id, btc_address, btc_network, address_type, connected_at FROM payments.payout_addresses WHERE agent_id = $1',
          [ctx.params.agentId],
        );
        const a = r.rows[0];
        return a ? { btcAddress: a.btc_address, network: a.btc_network, addressType: a.address_type, connectedAt: iso(a.connected_at) } : null;
      },
    },

    /** Operator: payouts by status (default: pending), oldest first so they are paid in order. */
    listPayouts: {
      params: {
        status: { type: 'enum', values: ['requested', 'pending', 'paying', 'paid', 'rejecting', 'rejected', 'failed', 'all'], optional: true },
        limit: { type: 'number', integer: true, min: 1, max: 500, optional: true, convert: true },
      },
      async handler(this: PayoutsThis, ctx: Context<{ status?: string; limit?: number }>) {
        requireOperator(ctx);
        const status = ctx.params.status ?? 'pending';
        const r = await this.db.query<CashoutRow>(
          `SELECT ${COLUMNS} FROM payments.cashouts WHERE ($1 = 'all' OR status = $1) ORDER BY created_at ASC, id ASC LIMIT $2`,
          [status, ctx.params.limit ?? 100],
        );
        return r.rows.map(toOperatorView);
      },
    },

    /** Operator: one payout. */
    getPayout: {
      params: { cashoutId: 'string' },
      async handler(this: PayoutsThis, ctx: Context<{ cashoutId: string }>) {
        requireOperator(ctx);
        return toOperatorView(await this.loadCashout(ctx.params.cashoutId));
      },
    },

    /** Operator: the BTC was sent — record txid and amount; the gas moves payouts-pending → payouts-paid. */
    markPayoutPaid: {
      params: {
        cashoutId: 'string',
        btcTxid: { type: 'string', trim: true },
        btcAmount: [{ type: 'string', trim: true }, { type: 'number', positive: true }],
      },
      async handler(this: PayoutsThis, ctx: Context<{ cashoutId: string; btcTxid: string; btcAmount: string | number }, CallMeta>) {
        const { cashoutId } = ctx.params;
        const txid = ctx.params.btcTxid.toLowerCase();
        if (!/^[0-9a-f]{64}$/.test(txid)) {
          throw new InvalidArgumentsError('btcTxid must be a Bitcoin transaction id: 64 hexadecimal characters.', {
            hint: 'Copy the txid of the payment from your wallet or a block explorer.',
            details: { field: 'btcTxid' },
          });
        }
        const sats = parseBtcAmount(ctx.params.btcAmount);
        if (sats === null) {
          throw new InvalidArgumentsError('btcAmount must be a positive BTC amount with at most 8 decimals (e.g. 0.00529).', {
            hint: 'Send the amount in BTC that the transaction paid to the seller\'s address.',
            details: { field: 'btcAmount' },
          });
        }
        const operator = requireOperator(ctx);
        const claimed = await this.db.query<CashoutRow>(
          `UPDATE payments.cashouts SET status = 'paying', btc_txid = $2, btc_amount_sats = $3, operator = $4, updated_at = now()
            WHERE id = $1 AND status = 'pending' RETURNING ${COLUMNS}`,
          [cashoutId, txid, sats.toString(), operator],
        );
        let row = claimed.rows[0];
        if (!row) {
          const current = await this.loadCashout(cashoutId);
          const sameFacts = current.btc_txid === txid && current.btc_amount_sats !== null && BigInt(current.btc_amount_sats) === sats;
          if ((current.status === 'paying' || current.status === 'paid') && sameFacts) {
            row = current; // a retry of the same instruction
          } else {
            throw new InvalidStateError(`Payout ${cashoutId} is ${current.status}; only a pending payout can be marked paid.`, {
              hint: current.status === 'paid' ? `It was already paid with txid ${current.btc_txid}.` : 'List pending payouts with GET /api/admin/payouts?status=pending.',
              details: { status: current.status },
            });
          }
        }
        if (row.status === 'paying') row = await this.finishPaying(row, ctx);
        return toOperatorView(row);
      },
    },

    /** Operator: refuse a payout; the gas goes back to the agent's balance (withdrawable again). */
    rejectPayout: {
      params: { cashoutId: 'string', reason: { type: 'string', min: 3, max: 1000, trim: true } },
      async handler(this: PayoutsThis, ctx: Context<{ cashoutId: string; reason: string }, CallMeta>) {
        const { cashoutId, reason } = ctx.params;
        const operator = requireOperator(ctx);
        const claimed = await this.db.query<CashoutRow>(
          `UPDATE payments.cashouts SET status = 'rejecting', reject_reason = $2, operator = $3, updated_at = now()
            WHERE id = $1 AND status = 'pending' RETURNING ${COLUMNS}`,
          [cashoutId, reason, operator],
        );
        let row = claimed.rows[0];
        if (!row) {
          const current = await this.loadCashout(cashoutId);
          if (current.status === 'rejecting' || current.status === 'rejected') {
            row = current; // a retry
          } else {
            throw new InvalidStateError(`Payout ${cashoutId} is ${current.status}; only a pending payout can be rejected.`, {
              hint: current.status === 'paid' ? 'A paid payout cannot be rejected: the BTC has left.' : 'List pending payouts with GET /api/admin/payouts?status=pending.',
              details: { status: current.status },
            });
          }
        }
        if (row.status === 'rejecting') row = await this.finishRejecting(row, ctx);
        return toOperatorView(row);
      },
    },

    /** The reconciling audit's page of cash-outs (agent, amount, fee, status); `ids` are cash-out ids. Reads only. */
    payoutRecords: {
      params: RECORD_QUERY_PARAMS,
      async handler(this: PayoutsThis, ctx: Context<RecordQuery>) {
        return recordPage<CashoutRow, PayoutRecord>(
          this.db,
          { select: `SELECT ${COLUMNS} FROM payments.cashouts WHERE true`, key: 'id', order: 'id', pageFilter: 'status = ANY($2::text[])' },
          ctx.params,
          (c) => ({
            cashoutId: c.id,
            agentId: c.agent_id,
            amountGas: Number(c.amount_gas),
            feeGas: Number(c.fee_gas),
            status: c.status,
            createdAt: isoOrNull(c.created_at)!,
            updatedAt: isoOrNull(c.updated_at)!,
          }),
          this.clock.now(),
        );
      },
    },

    /** Finishes cash-outs left midway (crash, timeout); runs on a timer too. For tests and operators. */
    sweepCashouts: {
      params: {},
      async handler(this: PayoutsThis) {
        return this.runCashoutSweep();
      },
    },
  },

  methods: {
    async loadCashout(this: PayoutsThis, id: string): Promise<CashoutRow> {
      const r = await this.db.query<CashoutRow>(`SELECT ${COLUMNS} FROM payments.cashouts WHERE id = $1`, [id]);
      if (!r.rows[0]) throw new NotFoundError(`No payout ${id}.`, { hint: 'List payouts with GET /api/admin/payouts?status=all.' });
      return r.rows[0];
    },

    async callLedger<A extends keyof LedgerActions & string>(this: PayoutsThis, ctx: Context | undefined, action: A, params: LedgerActions[A]['params']) {
      return callLedger(ctx ?? this.broker, action, params);
    },

    /** requested → pending (the ledger moved the gas) | failed (the ledger refused). Unknown outcome: stays requested. */
    async finishRequested(this: PayoutsThis, row: CashoutRow, ctx?: Context): Promise<CashoutRow> {
      try {
        // The fee quoted to the agent travels with the debit: cashoutPaid posts exactly it.
        const debit: CashoutDebitParams = {
          key: `cashout:${row.id}:debit`,
          cashoutId: row.id,
          agentId: row.agent_id,
          amountGas: Number(row.amount_gas),
          feeGas: Number(row.fee_gas),
        };
        await this.callLedger(ctx, LEDGER.cashoutDebit, debit);
      } catch (err) {
        if (!isDefinitiveRefusal(err)) {
          this.logger.warn(`cash-out ${row.id}: ledger outcome unknown, left for the sweeper`, (err as Error).message);
          throw new MarketError('service_unavailable', `Cash-out ${row.id} is recorded but the ledger did not answer; it will be completed or cancelled automatically.`, {
            hint: 'Check wallet in a minute: the cash-out appears as pending once the gas has moved. Do not request it again meanwhile.',
            details: { cashoutId: row.id },
            retryAfterSeconds: 30,
          });
        }
        const failed = await this.db.query<CashoutRow>(
          `UPDATE payments.cashouts SET status = 'failed', failure_reason = $2, request_key = NULL, updated_at = now()
            WHERE id = $1 AND status = 'requested' RETURNING ${COLUMNS}`,
          [row.id, (err as Error).message.slice(0, 500)],
        );
        return failed.rows[0] ?? (await this.loadCashout(row.id));
      }
      const done = await this.db.query<CashoutRow>(
        `UPDATE payments.cashouts SET status = 'pending', updated_at = now() WHERE id = $1 AND status = 'requested' RETURNING ${COLUMNS}`,
        [row.id],
      );
      return done.rows[0] ?? (await this.loadCashout(row.id));
    },

    async finishPaying(this: PayoutsThis, row: CashoutRow, ctx?: Context): Promise<CashoutRow> {
      await this.callLedger(ctx, LEDGER.cashoutPaid, { key: `cashout:${row.id}:paid`, cashoutId: row.id });
      const done = await this.finishWithNotice(row.id, `UPDATE payments.cashouts SET status = 'paid', paid_at = now(), updated_at = now() WHERE id = $1 AND status = 'paying' RETURNING ${COLUMNS}`, PAYMENTS_TOPICS.cashoutPaid);
      return done ?? (await this.loadCashout(row.id));
    },

    async finishRejecting(this: PayoutsThis, row: CashoutRow, ctx?: Context): Promise<CashoutRow> {
      await this.callLedger(ctx, LEDGER.cashoutReturn, { key: `cashout:${row.id}:return`, cashoutId: row.id });
      const done = await this.finishWithNotice(row.id, `UPDATE payments.cashouts SET status = 'rejected', rejected_at = now(), updated_at = now() WHERE id = $1 AND status = 'rejecting' RETURNING ${COLUMNS}`, PAYMENTS_TOPICS.cashoutRejected);
      return done ?? (await this.loadCashout(row.id));
    },

    /** The final update of a cash-out and its webhook fact (cashout.paid / cashout.rejected) in one transaction. */
    async finishWithNotice(this: PayoutsThis, cashoutId: string, sql: string, topic: string): Promise<CashoutRow | undefined> {
      const row = await this.db.transaction(async (tx) => {
        const u = await tx.query<CashoutRow>(sql, [cashoutId]);
        const done = u.rows[0];
        if (done) {
          const fact: CashoutFinished = {
            agentId: done.agent_id,
            cashoutId: done.id,
            amountGas: Number(done.amount_gas),
            status: topic === PAYMENTS_TOPICS.cashoutPaid ? 'paid' : 'rejected',
            at: new Date().toISOString(),
          };
          await enqueueEvent(tx, 'payments', topic, fact);
        }
        return done;
      });
      if (row) await this.relay?.wake();
      return row;
    },

    /** Repeats the keyed ledger call of every row left in an intermediate state; the ledger's keys make it safe. */
    async runCashoutSweep(this: PayoutsThis): Promise<{ finished: number }> {
      const stuck = await this.db.query<CashoutRow>(
        `UPDATE payments.cashouts SET sweep_claimed_until = now() + interval '60 seconds'
          WHERE id IN (
            SELECT id FROM payments.cashouts
             WHERE ((status = 'requested' AND updated_at < now() - make_interval(secs => $1))
                 OR (status IN ('paying', 'rejecting') AND updated_at < now() - make_interval(secs => $2)))
               AND (sweep_claimed_until IS NULL OR sweep_claimed_until < now())
             ORDER BY created_at LIMIT 50 FOR UPDATE SKIP LOCKED)
          RETURNING ${COLUMNS}`,
        [REQUESTED_GRACE_SECONDS, CLAIM_GRACE_SECONDS],
      );
      let finished = 0;
      for (const row of stuck.rows) {
        try {
          if (row.status === 'requested') await this.finishRequested(row);
          else if (row.status === 'paying') await this.finishPaying(row);
          else if (row.status === 'rejecting') await this.finishRejecting(row);
          finished++;
        } catch (err) {
          this.logger.warn(`cash-out ${row.id} (${row.status}) still unfinished`, (err as Error).message);
        }
      }
      return { finished };
    },
  },

  started(this: PayoutsThis) {
    const { config } = this;
    this.payoutsTimer = null;
    if (config.sweepIntervalMs > 0) {
      const timer = setInterval(() => {
        this.runCashoutSweep().catch((err: Error) => this.logger.warn('cash-out sweep failed', err.message));
      }, Math.max(config.sweepIntervalMs, 5_000));
      timer.unref();
      this.payoutsTimer = timer;
    }
  },

  stopped(this: PayoutsThis) {
    if (this.payoutsTimer) clearInterval(this.payoutsTimer);
  },
};
