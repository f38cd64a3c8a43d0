/**
 * The purchase engine is the one writer of a purchase's state: no other escrow source writes `status`;
 * a transition writes only the columns it declares (an undeclared one is refused before anything is
 * written); the timers of the state entered start from the table; the sweeper's work comes from the
 * timed transitions. Against the running service (embedded PGlite), ending with the ledger audit.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeWithPostgres, startTestApp, type TestApp } from '../../../test/kit';
import { expectLedgerClean } from '../../../test/kit/ledger';
import { DEFAULT_TERMS } from '../../../packages/market-rules';
import { PurchaseEngine, UndeclaredColumnError } from '../purchase-engine';
import { MACHINE, TRANSITIONS, timedTransitions, type Trigger } from '../../../packages/contracts/purchase-machine';
import { scenario, wallet } from './helpers';

const DAY_MS = 86_400_000;
const ESCROW_DIR = join(__dirname, '..');

describe('the purchase engine: one writer of purchase state', () => {
  let app: TestApp;
  const escrow = () => app.broker.getLocalService('escrow') as any;
  const engine = (): PurchaseEngine<Trigger> => escrow().engine;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.stop();
  });
  afterEach(async () => {
    await expectLedgerClean(app);
  });

  test('no escrow source but the engine writes status (the purchase INSERT creates it pending)', () => {
    const writers: string[] = [];
    for (const file of readdirSync(ESCROW_DIR).filter((f) => f.endsWith('.ts'))) {
      const src = readFileSync(join(ESCROW_DIR, file), 'utf8');
      // The SET list of every UPDATE of escrow.purchases (up to its WHERE).
      for (const m of src.matchAll(/UPDATE\s+escrow\.purchases\s+SET\s+([\s\S]*?)\bWHERE\b/gi)) {
        if (/(^|[\s,])status\s*=/i.test(m[1])) writers.push(`${file}: UPDATE … SET status =`);
      }
      if (/\bstatus\s*:\s*t\.to\b/.test(src)) writers.push(`${file}: status: t.to`);
      if (file !== 'purchase-engine.ts' && /\bset\.status\b/.test(src)) writers.push(`${file}: set.status`);
    }
    expect(writers).toEqual([]);
    expect(readFileSync(join(ESCROW_DIR, 'purchase-engine.ts'), 'utf8')).toMatch(/set\.status = t\.to/);
  });

  test('a transition may write only the columns it declares: anything else is refused and nothing changes', async () => {
    const s = await scenario(app);
    const { purchase } = await app.api.ok('purchase_service', { listingId: s.listingId }, s.buyer.apiKey);
    // ack declares acknowledged_at (a stamp) only: a delivery column is not its to write.
    await expect(engine().fire(purchase.id, 'ack', 'seller', { delivery_json: '{}' })).rejects.toBeInstanceOf(UndeclaredColumnError);
    // A stamp (written by the machine) is not an input either.
    await expect(engine().fire(purchase.id, 'ack', 'seller', { acknowledged_at: new Date(0).toISOString() })).rejects.toThrow(/does not declare column acknowledged_at/);
    // Nor is a timer column: the state entered sets it (entered + period).
    await expect(
      engine().fire(purchase.id, 'deliver', 'seller', { delivery_json: '{}', delivery_sha256: 'x', due_at: new Date(0).toISOString() }),
    ).rejects.toThrow(/does not declare column due_at/);
    // Nor status itself.
    await expect(engine().fire(purchase.id, 'ack', 'seller', { status: 'completed' })).rejects.toThrow(/does not declare column status/);
    const after = (await app.api.ok('get_purchase', { purchaseId: purchase.id }, s.buyer.apiKey)).purchase;
    expect(after).toMatchObject({ status: 'awaiting_delivery', acknowledgedAt: null, deliveredAt: null });
    await app.api.ok('request_refund', { purchaseId: purchase.id }, s.buyer.apiKey);
    expect(await wallet(app, s.buyer)).toMatchObject({ gasBalance: 1000, heldGas: 0 });
  });

  test('every transition declares its columns; plans write only those, status, updated_at and the due time of the state entered', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const row = { id: 'pur_x', status: 'delivered', delivery_days: 2, evaluation_hours: 48, evaluator_id: 'agt_evaluator', rating: null, price_gas: 250, due_at: null } as any;
    for (const t of TRANSITIONS.filter((x) => x.from.length > 0)) {
      const input = Object.fromEntries(Object.entries(t.sets).filter(([, v]) => v === '@input').map(([c]) => [c, c === 'rating' ? 5 : null]));
      const plan = engine().plan({ ...row, status: t.from[0] }, t, t.who[0], input, now);
      // A state change writes due_at (the timer leaving the state entered, or null): one column for every timer.
      const timers = t.to && t.to !== t.from[0] ? ['due_at'] : [];
      expect(timedTransitions(MACHINE).filter((x) => t.to && x.from.includes(t.to)).length).toBeLessThanOrEqual(1);
      const allowed = new Set([...Object.keys(t.sets), 'updated_at', ...(t.to ? ['status'] : []), ...timers]);
      expect(Object.keys(plan.set).filter((c) => !allowed.has(c))).toEqual([]);
    }
    // Entering delivered starts auto-release: entered + the operator's autoReleaseDays.
    const deliver = TRANSITIONS.find((t) => t.trigger === 'deliver')!;
    const plan = engine().plan({ ...row, status: 'awaiting_delivery' }, deliver, 'seller', { delivery_json: '{}', delivery_sha256: 'x' }, now);
    expect(plan.set).toMatchObject({ status: 'delivered', delivered_at: now.toISOString(), due_at: new Date(now.getTime() + DEFAULT_TERMS.autoReleaseDays * DAY_MS).toISOString() });
    expect(plan.events.map(([topic]) => topic)).toEqual(['escrow.purchase.delivered']);
    // Entering awaiting_delivery starts the listing's delivery window.
    const fund = TRANSITIONS.find((t) => t.trigger === 'fund')!;
    expect(engine().plan({ ...row, status: 'pending' }, fund, 'buyer', {}, now).set).toMatchObject({ due_at: new Date(now.getTime() + 2 * DAY_MS).toISOString() });
    // Entering awaiting_evaluation starts the evaluator's window (hours of the purchase's evaluation_hours); leaving it for a state no timer leaves clears it.
    const forEvaluation = TRANSITIONS.find((t) => t.trigger === 'deliver_for_evaluation')!;
    expect(engine().plan({ ...row, status: 'awaiting_delivery' }, forEvaluation, 'seller', { delivery_json: '{}', delivery_sha256: 'x' }, now).set).toMatchObject({ status: 'awaiting_evaluation', due_at: new Date(now.getTime() + 48 * 3_600_000).toISOString() });
    const accept = TRANSITIONS.find((t) => t.trigger === 'evaluate_accept')!;
    expect(engine().plan({ ...row, status: 'awaiting_evaluation' }, accept, 'evaluator', { evaluation_report: 'ok' }, now).set).toMatchObject({ status: 'completed', due_at: null });
  });

  test('every column the table names (sets, timers, their pauses) exists on escrow.purchases', async () => {
    const r = await escrow().db.query(`SELECT column_name FROM information_schema.columns WHERE table_schema = 'escrow' AND table_name = 'purchases'`);
    const columns = new Set(r.rows.map((x: { column_name: string }) => x.column_name));
    const named = TRANSITIONS.flatMap((t) => [...Object.keys(t.sets), ...(t.after ? ['due_at', t.after.unless ?? 'due_at'] : []), ...(t.when ? [t.when].flat() : [])]);
    expect([...new Set(named)].filter((c) => !columns.has(c))).toEqual([]);
  });

  test('the sweeper fires exactly the timed transitions of the table', async () => {
    expect(engine().timed().map((t) => t.trigger)).toEqual(TRANSITIONS.filter((t) => t.after).map((t) => t.trigger));
    const swept = await escrow().sweepTimers();
    expect(Object.keys(swept).sort()).toEqual(TRANSITIONS.filter((t) => t.after).map((t) => t.trigger).sort());
  });

  test('a timed transition fires once when due: auto-release settles to the seller', async () => {
    const s = await scenario(app);
    const { purchase } = await app.api.ok('purchase_service', { listingId: s.listingId }, s.buyer.apiKey);
    const delivered = (await app.api.ok('deliver_work', { purchaseId: purchase.id, delivery: { summary: 'done' } }, s.seller.apiKey)).purchase;
    expect(delivered.autoReleaseAt).not.toBeNull();
    app.clock.advance(DEFAULT_TERMS.autoReleaseDays * DAY_MS + 1000);
    expect(await escrow().sweepTransition('auto_release')).toBeGreaterThanOrEqual(1);
    expect(await escrow().sweepTransition('auto_release')).toBe(0);
    await escrow().relay.kick(); // the settle event was written with the change; the relay publishes it
    const after = (await app.api.ok('get_purchase', { purchaseId: purchase.id }, s.buyer.apiKey)).purchase;
    expect(after).toMatchObject({ status: 'completed', autoReleaseAt: null });
    expect(await wallet(app, s.seller)).toMatchObject({ gasBalance: purchase.sellerNetGas });
  });

  test('a row this replica remembers but another replica changed is read again: no stale refusal, no stale write', async () => {
    const s = await scenario(app);
    const { purchase } = await app.api.ok('purchase_service', { listingId: s.listingId }, s.buyer.apiKey);
    // This replica remembers the purchase as it funded it (awaiting_delivery); a twin replica delivers it.
    const e = escrow();
    const twin = new PurchaseEngine<Trigger>(MACHINE, { db: e.db, relay: e.relay, now: () => app.clock.now(), terms: () => DEFAULT_TERMS });
    await twin.fire(purchase.id, 'deliver', 'seller', { delivery_json: '{"summary":"done"}', delivery_sha256: 'x' });
    // Here the remembered row says awaiting_delivery: a confirm decided from it would be refused; it is read again and succeeds.
    const confirmed = await engine().fire(purchase.id, 'confirm', 'buyer');
    expect(confirmed.status).toBe('completed');
    // The twin still remembers "delivered": its confirm is written against that version, which is gone, so it reads
    // the purchase again and answers what is true now (completed: confirm is refused), and nothing is settled twice.
    await expect(twin.fire(purchase.id, 'confirm', 'buyer', {}, 'confirm_delivery')).rejects.toMatchObject({ type: 'invalid_state' });
    await e.relay.kick();
    expect(await wallet(app, s.seller)).toMatchObject({ gasBalance: purchase.sellerNetGas });
    expect(await wallet(app, s.buyer)).toMatchObject({ gasBalance: 1000 - purchase.priceGas, heldGas: 0 });
  });
});

describeWithPostgres('the purchase engine on PostgreSQL: racing fires', () => {
  let app: TestApp;
  const escrow = () => app.broker.getLocalService('escrow') as any;
  beforeAll(async () => {
    app = await startTestApp({ postgres: true });
  });
  afterAll(async () => {
    await app?.stop();
  });
  afterEach(async () => {
    await expectLedgerClean(app);
  });

  test('confirms, refunds and a due auto-release racing on one purchase: one wins, one money event, the money follows it', async () => {
    const s = await scenario(app);
    const { purchase } = await app.api.ok('purchase_service', { listingId: s.listingId }, s.buyer.apiKey);
    await app.api.ok('deliver_work', { purchaseId: purchase.id, delivery: { summary: 'done' } }, s.seller.apiKey);
    app.clock.advance(DEFAULT_TERMS.autoReleaseDays * DAY_MS + 1000);
    const engine: PurchaseEngine<Trigger> = escrow().engine;
    const results = await Promise.allSettled([
      ...Array.from({ length: 5 }, () => engine.fire(purchase.id, 'confirm', 'buyer')),
      ...Array.from({ length: 5 }, () => engine.fire(purchase.id, 'refund', 'seller', { refund_reason: null })),
      escrow().sweepTransition('auto_release'),
    ]);
    const fired = results.slice(0, 10).filter((r) => r.status === 'fulfilled').length;
    const swept = (results[10] as PromiseFulfilledResult<number>).value;
    expect(fired + (swept > 0 ? 1 : 0)).toBe(1);
    for (const r of results.slice(0, 10)) if (r.status === 'rejected') expect(r.reason).toMatchObject({ type: 'invalid_state' });
    const money = await escrow().db.query(
      `SELECT topic FROM escrow.outbox WHERE payload->>'purchaseId' = $1 AND topic = ANY($2::text[])`,
      [purchase.id, ['escrow.purchase.completed', 'escrow.purchase.refunded']],
    );
    expect(money.rows).toHaveLength(1);
    await escrow().relay.kick();
    const after = (await app.api.ok('get_purchase', { purchaseId: purchase.id }, s.buyer.apiKey)).purchase;
    const paid = after.status === 'completed';
    expect(money.rows[0].topic).toBe(paid ? 'escrow.purchase.completed' : 'escrow.purchase.refunded');
    expect(await wallet(app, s.seller)).toMatchObject({ gasBalance: paid ? purchase.sellerNetGas : 0 });
    expect(await wallet(app, s.buyer)).toMatchObject({ gasBalance: paid ? 1000 - purchase.priceGas : 1000, heldGas: 0 });
  });

  test('purchases moving at once share statements (group commit): each answered as if alone, one money event each, the money exact', async () => {
    const s = await scenario(app, { fundedGas: 5000, listing: { priceGas: 100 } });
    const engine: PurchaseEngine<Trigger> = escrow().engine;
    const bought = await Promise.all(Array.from({ length: 12 }, () => app.api.ok('purchase_service', { listingId: s.listingId }, s.buyer.apiKey)));
    const ids: string[] = bought.map((b) => b.purchase.id);
    expect(bought.map((b) => b.purchase.status)).toEqual(ids.map(() => 'awaiting_delivery'));
    const before = { ...engine.writes.stats };
    // Deliveries of twelve purchases at once, and — in the same batches — a second, stale delivery of one of them.
    const delivered = await Promise.allSettled([
      ...ids.map((purchaseId, i) => app.api.ok('deliver_work', { purchaseId, delivery: { summary: `work ${i}` } }, s.seller.apiKey)),
      engine.fire(ids[0], 'deliver', 'seller', { delivery_json: '{"summary":"again"}', delivery_sha256: 'x' }),
    ]);
    const deliveredOk = delivered.slice(0, 12).map((r) => (r.status === 'fulfilled' ? r.value.purchase.status : r.reason));
    // The engine's own second delivery and the tool call race on one purchase: exactly one of them wins.
    const second = delivered[12];
    if (second.status === 'fulfilled') {
      expect(deliveredOk.filter((x) => x !== 'delivered')).toHaveLength(1);
    } else {
      expect(second.reason).toMatchObject({ type: 'invalid_state' });
      expect(deliveredOk).toEqual(ids.map(() => 'delivered'));
    }
    const confirmed = await Promise.all(ids.map((purchaseId) => app.api.call('confirm_delivery', { purchaseId }, s.buyer.apiKey)));
    const after = engine.writes.stats;
    // Fewer statements than writes: concurrent changes went out together.
    expect(after.items - before.items).toBeGreaterThanOrEqual(24);
    expect(after.batches - before.batches).toBeLessThan(after.items - before.items);
    expect(after.retriedAlone).toBe(0);
    expect(confirmed.filter((c) => c.body.ok)).toHaveLength(12);
    for (const c of confirmed) expect(c.body.result.purchase).toMatchObject({ status: 'completed' });
    const views = await Promise.all(ids.map((purchaseId) => app.api.ok('get_purchase', { purchaseId }, s.buyer.apiKey)));
    for (const [i, v] of views.entries()) {
      expect(v.purchase).toMatchObject({ id: ids[i], status: 'completed' });
      expect(v.purchase.deliveredAt).toEqual(expect.any(String));
    }
    const money = await escrow().db.query(
      `SELECT payload->>'purchaseId' AS id, count(*)::int AS n FROM escrow.outbox WHERE payload->>'purchaseId' = ANY($1::text[]) AND topic = 'escrow.purchase.completed' GROUP BY 1`,
      [ids],
    );
    expect(money.rows.map((r: any) => r.n)).toEqual(ids.map(() => 1));
    await escrow().relay.kick();
    expect(await wallet(app, s.seller)).toMatchObject({ gasBalance: 12 * bought[0].purchase.sellerNetGas });
    expect(await wallet(app, s.buyer)).toMatchObject({ gasBalance: 5000 - 12 * 100, heldGas: 0 });
    // Listings counted each sale once (its completed sales are written together too: listings/completed-sales.ts).
    let salesCount = 0;
    for (let i = 0; i < 50 && salesCount < 12; i++) {
      await new Promise((r) => setTimeout(r, 100));
      salesCount = (await app.api.ok('search_services', { sellerId: s.seller.id })).listings[0].seller.reputation.salesCount;
    }
    expect(salesCount).toBe(12);
  });
});
