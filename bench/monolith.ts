/**
 * The lean monolith reference for `npm run bench` (issue #22): the same purchase lifecycle as the
 * marketplace — purchase_service → deliver_work → confirm_delivery — behind the same HTTP surface
 * (`POST /api/agent {tool, arguments}` with a bearer API key, `POST /api/agent/register`), driven by the
 * same client, with the same money guarantees and none of the distribution:
 *
 * - one SQL statement per step, each its own transaction:
 *   purchase  a CTE debiting the buyer (`balance >= price`) and posting the hold (buyer −price, escrow +price);
 *   deliver   a conditional UPDATE (`status = 'funded'`, the caller is the seller);
 *   confirm   a CTE settling (`status = 'delivered'`, the caller is the buyer) with three postings
 *             (escrow −price, seller +price−fee, platform fee +fee) and the seller's balance;
 * - double-entry: every step's postings sum to zero, agents' balances are updated with their postings,
 *   platform accounts' balances are the sum of their postings (no hot row), a CHECK keeps balances ≥ 0;
 * - `GET /audit`: sum of all postings is zero, every agent's balance equals its postings, the escrow
 *   account holds exactly the funded/delivered purchases.
 *
 * API keys are checked against an in-memory map of their SHA-256 (loaded at registration), as a lean
 * monolith would. `PORT`, `DATABASE_URL` (a fresh database: the schema is created here).
 */
import { createHash, randomBytes } from 'node:crypto';
import express from 'express';
import { Pool } from 'pg';

const FEE_PERCENT = 5;
const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DATABASE_POOL_MAX ?? 10) });

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS agents (id bigserial PRIMARY KEY, display_name text NOT NULL, key_hash text NOT NULL UNIQUE);
  CREATE TABLE IF NOT EXISTS accounts (agent_id bigint PRIMARY KEY REFERENCES agents, balance bigint NOT NULL DEFAULT 0 CHECK (balance >= 0));
  CREATE TABLE IF NOT EXISTS listings (id bigserial PRIMARY KEY, seller_id bigint NOT NULL REFERENCES agents, title text NOT NULL, price bigint NOT NULL CHECK (price > 0));
  CREATE TABLE IF NOT EXISTS purchases (
    id bigserial PRIMARY KEY, listing_id bigint NOT NULL REFERENCES listings, buyer_id bigint NOT NULL, seller_id bigint NOT NULL,
    price bigint NOT NULL, status text NOT NULL, delivery jsonb, created_at timestamptz NOT NULL DEFAULT now());
  -- account: an agent id, or a platform account ('escrow', 'fees', 'issuance').
  CREATE TABLE IF NOT EXISTS postings (id bigserial PRIMARY KEY, purchase_id bigint, account text NOT NULL, amount bigint NOT NULL, at timestamptz NOT NULL DEFAULT now());
`;

const PURCHASE = `
  WITH l AS (SELECT id, seller_id, price FROM listings WHERE id = $2),
  debit AS (UPDATE accounts a SET balance = a.balance - l.price FROM l
             WHERE a.agent_id = $1 AND a.balance >= l.price AND l.seller_id <> $1 RETURNING l.id, l.seller_id, l.price),
  p AS (INSERT INTO purchases (listing_id, buyer_id, seller_id, price, status)
        SELECT id, $1, seller_id, price, 'funded' FROM debit RETURNING id, price),
  post AS (INSERT INTO postings (purchase_id, account, amount)
           SELECT id, $1::text, -price FROM p UNION ALL SELECT id, 'escrow', price FROM p)
  SELECT (SELECT id FROM p) AS id, (SELECT price FROM p) AS price, (SELECT count(*) FROM l) AS listed`;

const DELIVER = `UPDATE purchases SET status = 'delivered', delivery = $3 WHERE id = $1 AND seller_id = $2 AND status = 'funded' RETURNING id, status`;

const CONFIRM = `
  WITH p AS (UPDATE purchases SET status = 'completed' WHERE id = $1 AND buyer_id = $2 AND status = 'delivered'
             RETURNING id, seller_id, price, price * ${FEE_PERCENT} / 100 AS fee),
  credit AS (UPDATE accounts a SET balance = a.balance + (p.price - p.fee) FROM p WHERE a.agent_id = p.seller_id RETURNING a.agent_id),
  post AS (INSERT INTO postings (purchase_id, account, amount)
           SELECT id, 'escrow', -price FROM p
           UNION ALL SELECT id, seller_id::text, price - fee FROM p
           UNION ALL SELECT id, 'fees', fee FROM p)
  SELECT p.id, p.fee, (SELECT count(*) FROM credit) AS credited FROM p`;

const GRANT = `
  WITH a AS (UPDATE accounts SET balance = balance + $2 WHERE agent_id = $1 RETURNING agent_id),
  post AS (INSERT INTO postings (account, amount) SELECT $1::text, $2 FROM a UNION ALL SELECT 'issuance', -$2 FROM a)
  SELECT agent_id FROM a`;

const keys = new Map<string, string>(); // sha256(api key) → agent id
const hash = (key: string) => createHash('sha256').update(key).digest('hex');

class ToolError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly hint: string) {
    super(message);
  }
}

type Tool = (agentId: string, args: Record<string, any>) => Promise<unknown>;
const tools: Record<string, Tool> = {
  async list_service(agentId, args) {
    const r = await pool.query('INSERT INTO listings (seller_id, title, price) VALUES ($1, $2, $3) RETURNING id', [agentId, String(args.title ?? ''), Number(args.priceGas)]);
    return { listing: { id: String(r.rows[0].id), priceGas: Number(args.priceGas) } };
  },
  async wallet(agentId) {
    const r = await pool.query('SELECT balance FROM accounts WHERE agent_id = $1', [agentId]);
    return { gasBalance: Number(r.rows[0]?.balance ?? 0) };
  },
  /** The bench's funding (the marketplace's is buy_gas + the sandbox checkout): issuance → agent. */
  async grant_gas(agentId, args) {
    await pool.query(GRANT, [agentId, Number(args.amount)]);
    return { credited: Number(args.amount) };
  },
  async purchase_service(agentId, args) {
    const r = await pool.query(PURCHASE, [agentId, String(args.listingId)]);
    const row = r.rows[0];
    if (!row?.id) {
      if (Number(row?.listed ?? 0) === 0) throw new ToolError(404, 'not_found', 'No such listing.', 'Search the catalogue for a listing id.');
      throw new ToolError(402, 'insufficient_gas', 'Your gas balance is below the price.', 'Buy gas, then purchase again.');
    }
    return { purchase: { id: String(row.id), status: 'funded', priceGas: Number(row.price) } };
  },
  async deliver_work(agentId, args) {
    const r = await pool.query(DELIVER, [String(args.purchaseId), agentId, JSON.stringify(args.delivery ?? {})]);
    if (!r.rows[0]) throw new ToolError(409, 'invalid_state', 'This purchase is not yours to deliver or not awaiting delivery.', 'Check the purchase with get_purchase.');
    return { purchase: { id: String(r.rows[0].id), status: 'delivered' } };
  },
  async confirm_delivery(agentId, args) {
    const r = await pool.query(CONFIRM, [String(args.purchaseId), agentId]);
    const row = r.rows[0];
    if (!row) throw new ToolError(409, 'invalid_state', 'This purchase is not yours to confirm or not delivered.', 'Check the purchase with get_purchase.');
    // The seller's account exists from registration, so the credit always lands; a miss would roll nothing back.
    if (Number(row.credited) !== 1) throw new ToolError(500, 'internal', 'Seller account missing.', 'Report this.');
    return { purchase: { id: String(row.id), status: 'completed', feeGas: Number(row.fee) } };
  },
};

const app = express();
app.set('etag', false);
app.use(express.json());

app.post('/api/agent/register', async (req, res) => {
  const apiKey = `mk_${randomBytes(24).toString('hex')}`;
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    const a = await c.query('INSERT INTO agents (display_name, key_hash) VALUES ($1, $2) RETURNING id', [String(req.body?.displayName ?? 'agent'), hash(apiKey)]);
    await c.query('INSERT INTO accounts (agent_id) VALUES ($1)', [a.rows[0].id]);
    await c.query('COMMIT');
    keys.set(hash(apiKey), String(a.rows[0].id));
    res.json({ agent: { id: String(a.rows[0].id) }, apiKey });
  } catch (err) {
    await c.query('ROLLBACK').catch(() => undefined);
    res.status(500).json({ ok: false, error: { code: 'internal', message: String(err), hint: 'Retry.' } });
  } finally {
    c.release();
  }
});

app.post('/api/agent', async (req, res) => {
  const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
  const agentId = key ? keys.get(hash(key)) : undefined;
  if (!agentId) {
    res.status(401).json({ ok: false, error: { code: 'unauthorized', message: 'Unknown API key.', hint: 'Register with POST /api/agent/register.' } });
    return;
  }
  const tool = tools[String(req.body?.tool)];
  if (!tool) {
    res.status(404).json({ ok: false, error: { code: 'unknown_tool', message: `No tool ${req.body?.tool}.`, hint: 'See the tool list.' } });
    return;
  }
  try {
    res.json({ ok: true, result: await tool(agentId, req.body.arguments ?? {}) });
  } catch (err) {
    if (err instanceof ToolError) res.status(err.status).json({ ok: false, error: { code: err.code, message: err.message, hint: err.hint } });
    else res.status(500).json({ ok: false, error: { code: 'internal', message: String((err as Error).message ?? err), hint: 'Retry.' } });
  }
});

/** The ledger audit: double-entry and balances. */
app.get('/audit', async (_req, res) => {
  const r = await pool.query(`
    SELECT (SELECT coalesce(sum(amount), 0) FROM postings) AS total,
           (SELECT count(*) FROM accounts a
             WHERE a.balance <> (SELECT coalesce(sum(amount), 0) FROM postings p WHERE p.account = a.agent_id::text)) AS wrong_balances,
           (SELECT coalesce(sum(amount), 0) FROM postings WHERE account = 'escrow') AS escrow,
           (SELECT coalesce(sum(price), 0) FROM purchases WHERE status IN ('funded', 'delivered')) AS open_items,
           (SELECT count(*) FROM purchases WHERE status = 'completed') AS completed,
           (SELECT count(*) FROM (SELECT purchase_id FROM postings WHERE purchase_id IS NOT NULL
             GROUP BY purchase_id HAVING sum(amount) <> 0) u) AS unbalanced`);
  const row = r.rows[0];
  const ok = Number(row.total) === 0 && Number(row.wrong_balances) === 0 && Number(row.unbalanced) === 0 && Number(row.escrow) === Number(row.open_items);
  res.json({ ok, postingsSum: Number(row.total), wrongBalances: Number(row.wrong_balances), unbalancedPurchases: Number(row.unbalanced), escrow: Number(row.escrow), openItems: Number(row.open_items), completed: Number(row.completed) });
});

async function main(): Promise<void> {
  await pool.query(SCHEMA);
  const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    const addr = server.address();
    console.log(`LISTENING ${typeof addr === 'object' && addr ? addr.port : ''}`);
  });
  server.keepAliveTimeout = 65_000;
  process.on('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
