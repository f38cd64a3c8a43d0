/**
 * Adding a state is one table entry plus its handler (docs/architecture.md, "Adding a state"). This
 * fixture adds `awaiting_review` — the seller submits the work for review, the buyer has 48 hours, then
 * it completes by itself — as the two pieces a real change would touch:
 *
 *   1. purchase-machine.ts   the state and its transitions, one with its timer     (REVIEW_MACHINE)
 *   2. the handler           an action that fires the new trigger                  (submitForReview)
 * (no migration: a timer is data on its transition and writes the one due_at column)
 *
 * and shows that everything else follows with no edit: the engine (guard, declared columns, the timer
 * started on entry, the notice and settle events), the status CHECK, the invalid_state hints and the
 * sweeper (whose query is derived from the timer). It runs the real engine and sweeper code over the
 * running service's database and outbox; the money ends in the ledger, audited after the test.
 */
import { startTestApp, type TestApp } from '../../../test/kit';
import { expectLedgerClean } from '../../../test/kit/ledger';
import { DEFAULT_TERMS } from '../../../packages/market-rules';
import { prepareDelivery } from '../delivery';
import { PurchaseEngine, syncStatusCheck, UndeclaredColumnError } from '../purchase-engine';
import { INPUT, MACHINE, NOW, statesAcceptingIn, statusCheckSqlOf, type Machine } from '../../../packages/contracts/purchase-machine';
import { asRole, type PurchaseRow } from '../purchases';
import { scenario, wallet } from './helpers';

const HOUR_MS = 3_600_000;

// ── 1. purchase-machine.ts: one entry in STATES, its transitions in TRANSITIONS (a timer on one) ──
const REVIEW_MACHINE: Machine = {
  states: {
    ...MACHINE.states,
    awaiting_review: {
      funded: true,
      sellerSees: true,
      open: true,
      final: false,
      countsAgainstBudget: true,
      task: { status: 'working', pollMs: 30_000 },
      next: 'The buyer is reviewing the work: confirm_delivery or request_refund within 48 h, otherwise it completes by itself.',
    },
  },
  transitions: [
    ...MACHINE.transitions,
    { trigger: 'submit_for_review', tool: 'submit_for_review', who: ['seller'], from: ['awaiting_delivery'], to: 'awaiting_review', sets: { delivered_at: NOW, delivery_json: INPUT, delivery_sha256: INPUT }, moneyEvent: null, notices: ['delivered'] },
    { trigger: 'confirm', tool: 'confirm_delivery', who: ['buyer'], from: ['awaiting_review'], to: 'completed', sets: { completed_at: NOW, completed_by: 'buyer' }, moneyEvent: 'settle' },
    { trigger: 'review_passed', tool: 'review expiry', who: ['sweeper'], from: ['awaiting_review'], to: 'completed', sets: { completed_at: NOW, completed_by: 'review_passed' }, moneyEvent: 'settle', after: { period: { hours: 48 } } },
  ],
};

// ── 2. the handler (an escrow action): who may fire, what the input is ──
async function submitForReview(engine: PurchaseEngine, purchaseId: string, sellerId: string, delivery: Record<string, unknown>): Promise<PurchaseRow> {
  return engine.fire(purchaseId, 'submit_for_review', (p) => asRole(p, sellerId, purchaseId, 'seller', 'submit_for_review'), (p) => {
    const { canonical, sha256 } = prepareDelivery(delivery, p.deliverable_schema);
    return { delivery_json: canonical, delivery_sha256: sha256 };
  }, 'submit_for_review');
}


describe('adding a state: one table entry plus its handler', () => {
  let app: TestApp;
  const escrow = () => app.broker.getLocalService('escrow') as any;
  const row = async (id: string): Promise<PurchaseRow> =>
    (await escrow().db.query('SELECT * FROM escrow.purchases WHERE id = $1', [id])).rows[0];

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await syncStatusCheck(escrow().db, MACHINE).catch(() => undefined);
    await app?.stop();
  });
  afterEach(async () => {
    await expectLedgerClean(app);
  });

  test('awaiting_review: entered through its handler, guarded, its timer fires through the sweeper, the money settles', async () => {
    const engine = new PurchaseEngine(REVIEW_MACHINE, { db: escrow().db, relay: escrow().relay, now: () => app.clock.now(), terms: () => DEFAULT_TERMS });
    const s = await scenario(app);
    // The buyer has a webhook (as notifications would tell escrow): its notices are written (issue #22).
    await escrow().db.query(`INSERT INTO escrow.webhook_agents (agent_id, has_webhooks, version) VALUES ($1, true, 1)`, [s.buyer.id]);
    const { purchase } = await app.api.ok('purchase_service', { listingId: s.listingId }, s.buyer.apiKey);

    // The status CHECK follows the table: before it is synced the database refuses the new state.
    await expect(submitForReview(engine, purchase.id, s.seller.id, { summary: 'done' })).rejects.toThrow(/purchases_status_check/);
    expect((await row(purchase.id)).status).toBe('awaiting_delivery');
    await syncStatusCheck(escrow().db, REVIEW_MACHINE);
    const check = await escrow().db.query(`SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conname = 'purchases_status_check'`);
    expect(check.rows[0].def).toContain("'awaiting_review'");
    expect(statusCheckSqlOf(REVIEW_MACHINE)).toContain("'awaiting_review'");

    // The guard: only the seller, only from awaiting_delivery (the buyer is not_found-or-forbidden by role).
    await expect(engine.fire(purchase.id, 'submit_for_review', 'buyer', { delivery_json: '{}', delivery_sha256: 'x' })).rejects.toMatchObject({ type: 'invalid_state' });
    // Declared columns: the handler may not write the timer's column (the engine does, on entry).
    await expect(engine.fire(purchase.id, 'submit_for_review', 'seller', { delivery_json: '{}', delivery_sha256: 'x', due_at: new Date(0).toISOString() })).rejects.toBeInstanceOf(UndeclaredColumnError);

    const reviewed = await submitForReview(engine, purchase.id, s.seller.id, { summary: 'done' });
    expect(reviewed.status).toBe('awaiting_review');
    const stored = await row(purchase.id);
    // Its timer started when it entered the state: entered (delivered_at, the same instant) + 48 h.
    expect(new Date(stored.due_at!).getTime()).toBe(new Date(stored.delivered_at!).getTime() + 48 * HOUR_MS);
    expect(stored.delivery_sha256).toMatch(/^[0-9a-f]{64}$/);
    // Its notice went out with the change (the outbox row of the same statement).
    const notices = await escrow().db.query(`SELECT topic FROM escrow.outbox WHERE payload->>'purchaseId' = $1 ORDER BY id`, [purchase.id]);
    expect(notices.rows.map((r: { topic: string }) => r.topic)).toContain('escrow.purchase.delivered');

    // The invalid_state hint of the new state comes from its table entry.
    const refused = await engine.fire(purchase.id, 'submit_for_review', 'seller', { delivery_json: '{}', delivery_sha256: 'x' }).catch((e: any) => e);
    expect(refused).toMatchObject({ type: 'invalid_state' });
    expect(refused.data.hint).toBe(REVIEW_MACHINE.states.awaiting_review.next);
    expect(statesAcceptingIn(REVIEW_MACHINE, ['confirm'], 'buyer')).toEqual(['delivered', 'awaiting_review']);

    // The sweeper's work is derived from the timer: nothing is due yet, then exactly this purchase.
    const timed = engine.timed().find((t) => t.trigger === 'review_passed')!;
    expect(timed).toBeDefined();
    expect(await engine.fireDue(timed, 100)).toBe(0);
    app.clock.advance(48 * HOUR_MS + 1000);
    expect(await engine.fireDue(timed, 100)).toBe(1);
    expect(await engine.fireDue(timed, 100)).toBe(0);
    await escrow().relay.kick();
    const done = await row(purchase.id);
    expect(done).toMatchObject({ status: 'completed', completed_by: 'review_passed' });
    // The settle event travelled with the change: the seller has the net, the buyer's hold is gone.
    expect(await wallet(app, s.seller)).toMatchObject({ gasBalance: purchase.sellerNetGas });
    expect(await wallet(app, s.buyer)).toMatchObject({ gasBalance: 1000 - purchase.priceGas, heldGas: 0 });
  });
});
