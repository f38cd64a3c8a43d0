/** Read side of the ledger: an agent's entries (paged) and the wallet figures. Reads never write. */
import type { Queryable } from '../../packages/db';
import { InvalidArgumentsError } from '../../packages/errors';
import { agentAccount, withdrawableIn } from './postings';
import type { EntryType, WalletEntry, WalletFigures } from '../../packages/contracts/ledger';
export type { WalletEntry, WalletFigures };

export const DEFAULT_PAGE = 20;

export function parseCursor(cursor: string | undefined): number | null {
  if (!cursor) return null;
  const m = /^pst_(\d{1,18})$/.exec(cursor);
  if (!m) {
    throw new InvalidArgumentsError('cursor is not one this ledger returned.', {
      hint: 'Pass nextCursor from the previous wallet page unchanged, or leave cursor out for the newest entries.',
      details: { field: 'cursor' },
    });
  }
  return Number(m[1]);
}

interface PostingRow {
  id: string;
  amount: string;
  entry_type: EntryType;
  balance_after: string;
  purchase_id: string | null;
  session_id: string | null;
  cashout_id: string | null;
  created_at: Date;
}

function toEntry(p: PostingRow): WalletEntry {
  const e: WalletEntry = {
    id: `pst_${p.id}`,
    type: p.entry_type,
    amountGas: Number(p.amount),
    balanceAfterGas: Number(p.balance_after),
    createdAt: new Date(p.created_at).toISOString(),
  };
  if (p.purchase_id) e.purchaseId = p.purchase_id;
  if (p.session_id) e.sessionId = p.session_id;
  if (p.cashout_id) e.cashoutId = p.cashout_id;
  return e;
}

export async function entriesPage(q: Queryable, agentId: string, limit: number, cursor?: string): Promise<{ entries: WalletEntry[]; nextCursor: string | null }> {
  const after = parseCursor(cursor);
  const r = await q.query<PostingRow>(
    `SELECT id, amount, entry_type, balance_after, purchase_id, session_id, cashout_id, created_at
       FROM ledger.postings WHERE account_id = $1 AND ($2::bigint IS NULL OR id < $2::bigint)
      ORDER BY id DESC LIMIT $3`,
    [agentAccount(agentId), after, limit + 1],
  );
  const rows = r.rows.slice(0, limit);
  return { entries: rows.map(toEntry), nextCursor: r.rows.length > limit ? `pst_${rows[rows.length - 1].id}` : null };
}

/** The ledger's part of the wallet tool; pending earnings are the seller nets fixed on the open holds. */
export async function walletFigures(q: Queryable, agentId: string, limit: number, cursor?: string): Promise<WalletFigures> {
  const [page, w, held, pending] = await Promise.all([
    entriesPage(q, agentId, limit, cursor),
    withdrawableIn(q, agentId),
    q.query<{ held: string }>(`SELECT COALESCE(sum(amount_gas), 0) AS held FROM ledger.holds WHERE buyer_id = $1 AND status = 'pending'`, [agentId]),
    q.query<{ net: string }>(`SELECT COALESCE(sum(seller_net_gas), 0) AS net FROM ledger.holds WHERE seller_id = $1 AND status = 'pending'`, [agentId]),
  ]);
  return {
    gasBalance: w.gasBalance,
    heldGas: Number(held.rows[0]?.held ?? 0),
    pendingEarningsGas: Number(pending.rows[0]?.net ?? 0),
    withdrawableGas: w.withdrawableGas,
    lifetimeEarnedGas: w.lifetimeEarnedGas,
    entries: page.entries,
    nextCursor: page.nextCursor,
  };
}
