/**
 * The operator's CLI: `npm run admin -- <command>`. Talks to a running marketplace's /api/admin
 * (MARKET_BASE_URL or PORT; ADMIN_TOKEN or the local DATA_DIR/operator-token). See `help`.
 */
import { adminRequest, OperatorError, operatorTarget, type OperatorTarget } from '../packages/operator-client';

const HELP = `Operator commands (npm run admin -- <command>):

  payouts list [--status pending|paid|rejected|all|…] [--limit N]
  payouts pay <cashoutId> --txid <btc txid> --btc <amount in BTC>
  payouts reject <cashoutId> --reason "…"
  disputes list [--status open|…]
  disputes resolve <purchaseId> --refund|--release [--note "…"]
  purchases fire-timer <purchaseId>       sandbox only: the purchase's running timer fires now (see a timeout without waiting)
  listings seed <listingId|agentId> [--off]
  listings takedown <listingId> --reason "…"
  reports bugs|experiences [--limit N]
  audit-log [--limit N] [--action payouts.pay]
  help

Target: MARKET_BASE_URL (default http://localhost:$PORT, PORT default 3000).
Token:  ADMIN_TOKEN, or on a development machine the DATA_DIR/operator-token the server wrote.
Add --json to any command for raw JSON.`;

class UsageError extends Error {}

interface Parsed {
  positional: string[];
  flags: Record<string, string | true>;
}

// Boolean flags never take a value (so "--refund pur_1" keeps pur_1 positional).
const BOOLEAN_FLAGS = new Set(['refund', 'release', 'off', 'json', 'help']);

export function parseArgs(argv: string[]): Parsed {
  const positional: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      if (eq > 0) {
        flags[a.slice(2, eq)] = a.slice(eq + 1);
      } else if (!BOOLEAN_FLAGS.has(a.slice(2)) && i + 1 < argv.length && !argv[i + 1].startsWith('--')) {
        flags[a.slice(2)] = argv[++i];
      } else {
        flags[a.slice(2)] = true;
      }
    } else {
      positional.push(a);
    }
  }
  return { positional, flags };
}

function str(flags: Parsed['flags'], name: string, what: string): string {
  const v = flags[name];
  if (typeof v !== 'string' || !v.trim()) throw new UsageError(`--${name} is required: ${what}`);
  return v.trim();
}

function arg(p: Parsed, index: number, what: string): string {
  const v = p.positional[index];
  if (!v) throw new UsageError(`missing ${what}`);
  return v;
}

/** A row of the API's JSON, printed field by field. */
type Json = Record<string, unknown>;

/** One dispute as escrow.listDisputes returns it (fields read by renderDispute). */
interface DisputeEntry {
  purchase?: { id?: string; listingTitle?: string; priceGas?: number; status?: string; buyerId?: string; sellerId?: string; disputedAt?: string | null };
  disputedBy?: string | null;
  reason?: string | null;
  outcome?: string | null;
  note?: string | null;
  delivery?: { delivery?: unknown; sha256?: string | null; deliveredAt?: string | null } | null;
  messages?: Array<{ createdAt?: string | null; from?: string; senderId?: string; body?: string }>;
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** A plain aligned table; long cells are cut so a row stays on one line. */
export function table(rows: Record<string, unknown>[], columns: [string, string][], maxWidth = 48): string {
  if (rows.length === 0) return '(none)';
  const cut = (s: string) => (s.length > maxWidth ? `${s.slice(0, maxWidth - 1)}…` : s);
  const data = rows.map((r) => columns.map(([key]) => cut(cell(key.split('.').reduce<unknown>((o, k) => (o !== null && o !== undefined ? (o as Json)[k] : undefined), r)))));
  const widths = columns.map(([, title], i) => Math.max(title.length, ...data.map((d) => d[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  return [line(columns.map(([, t]) => t)), line(widths.map((w) => '-'.repeat(w))), ...data.map(line)].join('\n');
}

function kv(obj: Record<string, unknown>): string {
  const keys = Object.keys(obj);
  const w = Math.max(...keys.map((k) => k.length));
  return keys.map((k) => `${k.padEnd(w)}  ${cell(obj[k])}`).join('\n');
}

const PAYOUT_COLUMNS: [string, string][] = [
  ['id', 'ID'],
  ['agentId', 'AGENT'],
  ['status', 'STATUS'],
  ['amountGas', 'GAS'],
  ['feeGas', 'FEE'],
  ['netGas', 'NET'],
  ['netUsd', 'USD'],
  ['btcAddress', 'BTC ADDRESS'],
  ['createdAt', 'REQUESTED'],
  ['btcTxid', 'TXID'],
];

export async function run(argv: string[], target: OperatorTarget = operatorTarget(), out: (s: string) => void = console.log): Promise<void> {
  const p = parseArgs(argv);
  const [group, sub] = p.positional;
  const json = p.flags.json === true;
  const show = (result: unknown, render: () => string) => out(json ? JSON.stringify(result, null, 2) : render());
  const q = (params: Record<string, string | undefined>) => {
    const s = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined) as [string, string][]).toString();
    return s ? `?${s}` : '';
  };
  const opt = (name: string) => (typeof p.flags[name] === 'string' ? (p.flags[name] as string) : undefined);

  if (!group || group === 'help' || p.flags.help) {
    out(HELP);
    return;
  }

  if (group === 'payouts') {
    if (sub === 'list') {
      const r = await adminRequest<{ status: string; payouts: Json[] }>(target, 'GET', `/payouts${q({ status: opt('status') ?? 'pending', limit: opt('limit') })}`);
      show(r, () => `${r.payouts.length} payout(s), status ${r.status}\n${table(r.payouts, PAYOUT_COLUMNS, 66)}`);
      return;
    }
    if (sub === 'pay') {
      const id = arg(p, 2, 'the cash-out id (csh_…): payouts pay <id> --txid <txid> --btc <amount>');
      const btcTxid = str(p.flags, 'txid', 'the Bitcoin transaction id of the payment');
      const btcAmount = str(p.flags, 'btc', 'the BTC amount sent, e.g. 0.00529');
      const r = await adminRequest<{ payout: Json }>(target, 'POST', `/payouts/${encodeURIComponent(id)}/pay`, { btcTxid, btcAmount });
      show(r, () => `Payout ${id} marked paid.\n${kv(pick(r.payout, ['id', 'agentId', 'status', 'amountGas', 'netGas', 'btcAddress', 'btcTxid', 'btcAmount', 'paidAt']))}`);
      return;
    }
    if (sub === 'reject') {
      const id = arg(p, 2, 'the cash-out id (csh_…): payouts reject <id> --reason "…"');
      const reason = str(p.flags, 'reason', 'why the payout is rejected (the agent sees it)');
      const r = await adminRequest<{ payout: Json & { amountGas: number; agentId: string } }>(target, 'POST', `/payouts/${encodeURIComponent(id)}/reject`, { reason });
      show(r, () => `Payout ${id} rejected; ${r.payout.amountGas} gas returned to ${r.payout.agentId}.\n${kv(pick(r.payout, ['id', 'status', 'amountGas', 'rejectReason', 'rejectedAt']))}`);
      return;
    }
    throw new UsageError('payouts: use list, pay or reject');
  }

  if (group === 'disputes') {
    if (sub === 'list') {
      const r = await adminRequest<{ disputes?: DisputeEntry[] }>(target, 'GET', `/disputes${q({ status: opt('status') })}`);
      const disputes = r.disputes ?? [];
      show(r, () => {
        if (disputes.length === 0) return '(no disputes)';
        return disputes.map((d) => renderDispute(d)).join('\n\n');
      });
      return;
    }
    if (sub === 'resolve') {
      const id = arg(p, 2, 'the purchase id (pur_…): disputes resolve <id> --refund|--release');
      const refund = p.flags.refund === true;
      const release = p.flags.release === true;
      if (refund === release) throw new UsageError('say exactly one of --refund (buyer gets the gas back) or --release (seller is paid)');
      const r = await adminRequest<{ purchase?: { status?: string } }>(target, 'POST', `/disputes/${encodeURIComponent(id)}/resolve`, { outcome: refund ? 'refund' : 'release', note: opt('note') });
      show(r, () => `Dispute on ${id} resolved: ${refund ? 'refunded to the buyer' : 'released to the seller'}${r.purchase?.status ? ` (purchase is ${r.purchase.status})` : ''}.`);
      return;
    }
    throw new UsageError('disputes: use list or resolve');
  }

  if (group === 'purchases') {
    if (sub === 'fire-timer') {
      const id = arg(p, 2, 'the purchase id (pur_…): purchases fire-timer <id>');
      const r = await adminRequest<{ purchaseId: string; trigger: string; status: string }>(target, 'POST', `/purchases/${encodeURIComponent(id)}/fire-timer`);
      show(r, () => `Timer ${r.trigger} of ${r.purchaseId} fired: the purchase is ${r.status}.`);
      return;
    }
    throw new UsageError('purchases: use fire-timer');
  }

  if (group === 'listings') {
    if (sub === 'seed') {
      const id = arg(p, 2, 'a listing id (lst_…) or agent id (agt_…): listings seed <id> [--off]');
      const isSeed = p.flags.off !== true;
      const r = await adminRequest<{ agent: { id: string; displayName: string; isSeed: boolean } }>(target, 'POST', `/listings/${encodeURIComponent(id)}/seed`, { isSeed });
      show(r, () => `Agent ${r.agent.id} (${r.agent.displayName}) is ${r.agent.isSeed ? 'now a seed seller' : 'no longer a seed seller'}.`);
      return;
    }
    if (sub === 'takedown') {
      const id = arg(p, 2, 'the listing id (lst_…): listings takedown <id> --reason "…"');
      const reason = str(p.flags, 'reason', 'why the listing is taken down (the seller sees it)');
      const r = await adminRequest<{ listing?: { status?: string } }>(target, 'POST', `/listings/${encodeURIComponent(id)}/takedown`, { reason });
      show(r, () => `Listing ${id} taken down${r.listing?.status ? ` (status ${r.listing.status})` : ''}.`);
      return;
    }
    throw new UsageError('listings: use seed or takedown');
  }

  if (group === 'reports') {
    if (sub !== 'bugs' && sub !== 'experiences') throw new UsageError('reports: use bugs or experiences');
    const r = await adminRequest<Json[] | { reports?: Json[]; bugs?: Json[]; experiences?: Json[]; items?: Json[] }>(target, 'GET', `/reports/${sub}${q({ limit: opt('limit') })}`);
    const items: Json[] = Array.isArray(r) ? r : (r.reports ?? r.bugs ?? r.experiences ?? r.items ?? []);
    show(r, () => {
      if (items.length === 0) return `(no ${sub} reports)`;
      const cols: [string, string][] = Object.keys(items[0]).filter((k) => typeof items[0][k] !== 'object' || items[0][k] === null).slice(0, 7).map((k) => [k, k.toUpperCase()]);
      return `${items.length} report(s)\n${table(items, cols)}`;
    });
    return;
  }

  if (group === 'audit-log') {
    const r = await adminRequest<{ entries: Json[] }>(target, 'GET', `/audit-log${q({ limit: opt('limit'), action: opt('action') })}`);
    show(r, () => table(r.entries, [
      ['id', '#'],
      ['at', 'WHEN'],
      ['operator', 'WHO'],
      ['action', 'WHAT'],
      ['target', 'TARGET'],
      ['ok', 'OK'],
      ['params', 'PARAMS'],
      ['error', 'ERROR'],
    ], 60));
    return;
  }

  throw new UsageError(`unknown command "${p.positional.join(' ')}"`);
}

function pick(obj: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, obj?.[k]]));
}

/** One dispute as escrow.listDisputes returns it: {purchase, disputedBy, reason, outcome, note, delivery, messages}. */
function renderDispute(d: DisputeEntry): string {
  const p = d.purchase ?? {};
  const lines = [
    `Dispute on ${p.id}  "${p.listingTitle ?? ''}"  ${p.priceGas} gas  status=${p.status}${d.outcome ? `  outcome=${d.outcome}` : ''}`,
    `  buyer ${p.buyerId}  seller ${p.sellerId}  disputed by ${d.disputedBy ?? '?'} at ${p.disputedAt ?? '?'}`,
  ];
  if (d.reason) lines.push(`  reason: ${d.reason}`);
  if (d.delivery) lines.push(`  delivery (${d.delivery.deliveredAt ?? ''}, sha256 ${String(d.delivery.sha256 ?? '').slice(0, 12)}…): ${cell((d.delivery.delivery as { summary?: unknown } | null | undefined)?.summary ?? d.delivery.delivery).slice(0, 300)}`);
  else lines.push('  delivery: none yet');
  for (const m of d.messages ?? []) lines.push(`  [${m.createdAt ?? ''}] ${m.from ?? m.senderId}: ${String(m.body).slice(0, 300)}`);
  if (d.note) lines.push(`  operator note: ${d.note}`);
  return lines.join('\n');
}

if (require.main === module) {
  run(process.argv.slice(2)).then(
    () => process.exit(0),
    (err) => {
      if (err instanceof UsageError) {
        console.error(`error: ${err.message}\n\nRun "npm run admin -- help" for the commands.`);
        process.exit(2);
      }
      if (err instanceof OperatorError) {
        console.error(`error: ${err.message}`);
        process.exit(1);
      }
      console.error(`error: ${(err as Error).message ?? err}`);
      process.exit(1);
    },
  );
}
