/**
 * Issue 38: the whole marketplace under a small load while its PostgreSQL restarts (every connection dropped,
 * refused for 2.6 s), is down for 10 s, and is frozen for 10 s (sockets open, nothing answered). The database is
 * real: a fresh database on TEST_DATABASE_URL's server, reached through a TCP proxy (test/kit/fault-proxy.ts)
 * that the test cuts and freezes — the shared server itself is never stopped.
 *
 * Agents buy, deliver and confirm, each call with its own Idempotency-Key, retried with that key after
 * Retry-After as a well-behaved client does. What must hold:
 *   - every failed first try is 503 service_unavailable with Retry-After and a hint (never 500, never a hang to the
 *     bus timeout);
 *   - nothing fails after retries, and no retry answers 409 for a step that had succeeded;
 *   - every failed call's request-log row is there once the database is back;
 *   - the ledger audit is clean and the balances are exact: each purchase held, settled and split once.
 */
import { createTestDatabase, describeWithPostgres, startTestApp, TEST_DATABASE_URL, type TestApp, type TestDatabase } from '../../../test/kit';
import { FaultProxy } from '../../../test/kit/fault-proxy';
import { creditGas, expectLedgerClean } from '../../../test/kit/ledger';
import { newAgent, newListing, type TestAgent } from '../../escrow/test/helpers';

const PRICE = 100;
const SELLER_NET = 90;
const PAIRS = 4;
const FUNDED = 50_000;

interface Measured {
  calls: number;
  firstTryFailures: Record<string, number>;
  retryAnswers: Record<string, number>;
  /** 503s without Retry-After or without a hint. */
  badUnavailable: number;
  /** A retry answered 409 for a step the purchase shows done (the red team's "409 after success"). */
  conflictAfterSuccess: number;
  failedAfterRetries: number;
  longestCallMs: number;
  failedRequestIds: string[];
}

describeWithPostgres('database faults under load: 503 with Retry-After, retries get the first answer, money moves once', () => {
  let tdb: TestDatabase;
  let proxy: FaultProxy;
  let app: TestApp;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    const target = new URL(TEST_DATABASE_URL!);
    proxy = new FaultProxy({ host: target.hostname, port: Number(target.port || 5432) });
    await proxy.start();
    app = await startTestApp({
      env: {
        DATABASE_URL: proxy.urlFor(tdb.url),
        // Shorter than the defaults so the suite stays short; the shape is the same (each under the request timeout).
        DATABASE_CONNECT_TIMEOUT_MS: '1500',
        DATABASE_STATEMENT_TIMEOUT_MS: '2000',
        DATABASE_QUERY_TIMEOUT_MS: '3000',
        DATABASE_KEEPALIVE_INITIAL_DELAY_MS: '2000',
        // The outbox relay and the pending-hold sweeper retry what an outage interrupted.
        SWEEP_INTERVAL_MS: '1000',
      },
    });
  }, 60_000);
  afterAll(async () => {
    await proxy?.up().catch(() => undefined);
    proxy?.thaw();
    await app?.stop().catch(() => undefined);
    await proxy?.stop();
    await tdb?.drop();
  });

  it('restart, 10 s down, 10 s frozen', async () => {
    const m: Measured = { calls: 0, firstTryFailures: {}, retryAnswers: {}, badUnavailable: 0, conflictAfterSuccess: 0, failedAfterRetries: 0, longestCallMs: 0, failedRequestIds: [] };
    const pairs: Array<{ buyer: TestAgent; seller: TestAgent; listingId: string; done: number }> = [];
    for (let i = 0; i < PAIRS; i++) {
      const [buyer, seller] = [await newAgent(app, `Buyer ${i}`), await newAgent(app, `Seller ${i}`)];
      await creditGas(app, buyer.id, FUNDED);
      pairs.push({ buyer, seller, listingId: (await newListing(app, seller, { priceGas: PRICE })).id, done: 0 });
    }

    /** One tool call as a careful client makes it: a key of its own, retried with that key after Retry-After. */
    let seq = 0;
    async function keyed(tool: string, args: Record<string, unknown>, who: TestAgent): Promise<any> {
      const key = `fault-${tool}-${++seq}`;
      const deadline = Date.now() + 60_000;
      for (let attempt = 0; ; attempt++) {
        const started = Date.now();
        const r = await app.api.call(tool, args, who.apiKey, { 'idempotency-key': key });
        m.calls++;
        m.longestCallMs = Math.max(m.longestCallMs, Date.now() - started);
        if (r.status === 200) return r.body.result;
        const label = `${r.status} ${r.body.error?.code}`;
        if (attempt === 0) m.firstTryFailures[label] = (m.firstTryFailures[label] ?? 0) + 1;
        else m.retryAnswers[label] = (m.retryAnswers[label] ?? 0) + 1;
        const retryAfter = Number(r.headers.get('retry-after'));
        if (r.status === 503) {
          if (!(retryAfter > 0) || !r.body.error?.hint) m.badUnavailable++;
          m.failedRequestIds.push(r.headers.get('x-request-id')!);
        } else if (r.status === 409 && r.body.error?.details?.status) {
          // invalid_state naming the purchase's state: the step was refused as already past.
          m.conflictAfterSuccess++;
          return null;
        } else if (!(r.status === 409 && retryAfter > 0)) {
          // Anything but "unavailable" or "the same key is still running": a failure the client cannot retry.
          m.failedAfterRetries++;
          return null;
        }
        if (Date.now() > deadline) {
          m.failedAfterRetries++;
          return null;
        }
        await new Promise((res) => setTimeout(res, Math.min(retryAfter || 1, 5) * 1000));
      }
    }

    const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));
    let running = true;
    async function worker(p: (typeof pairs)[number]): Promise<void> {
      while (running) {
        const bought = await keyed('purchase_service', { listingId: p.listingId }, p.buyer);
        if (!bought) return;
        const purchaseId = bought.purchase.id;
        if (!(await keyed('deliver_work', { purchaseId, delivery: { summary: `work ${purchaseId}` } }, p.seller))) return;
        const confirmed = await keyed('confirm_delivery', { purchaseId }, p.buyer);
        if (!confirmed) return;
        expect(confirmed.purchase.status).toBe('completed');
        p.done++;
        await sleep(100);
      }
    }
    const load = Promise.all(pairs.map(worker));

    await sleep(2_000);
    // (a) restart: every connection dropped, refused while the server starts again (2.6 s, as measured).
    await proxy.down();
    await sleep(2_600);
    await proxy.up();
    await sleep(5_000);
    // (b) down for 10 s.
    await proxy.down();
    await sleep(10_000);
    await proxy.up();
    await sleep(5_000);
    // (c) frozen for 10 s: connections accepted and kept, nothing answered.
    proxy.freeze();
    await sleep(10_000);
    proxy.thaw();
    await sleep(3_000);
    running = false;
    await load;

    // Wait for the outbox to settle every confirmed purchase, then check the money to the gas.
    const flows = pairs.reduce((n, p) => n + p.done, 0);
    console.log(`database faults: ${JSON.stringify({ flows, ...m, failedRequestIds: m.failedRequestIds.length })}`);
    for (const p of pairs) {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const [b, s] = await Promise.all([app.api.ok('wallet', {}, p.buyer.apiKey), app.api.ok('wallet', {}, p.seller.apiKey)]);
        const settled = b.gasBalance === FUNDED - PRICE * p.done && b.heldGas === 0 && s.gasBalance === SELLER_NET * p.done;
        if (settled || Date.now() > deadline) {
          expect({ buyer: b.gasBalance, held: b.heldGas, seller: s.gasBalance }).toEqual({ buyer: FUNDED - PRICE * p.done, held: 0, seller: SELLER_NET * p.done });
          break;
        }
        await sleep(250);
      }
      // One purchase per purchase_service key, each completed: none doubled, none left behind.
      const escrowDb = (app.broker.getLocalService('escrow') as any).db;
      const byStatus = await escrowDb.query('SELECT status, count(*)::int AS n FROM escrow.purchases WHERE buyer_id = $1 GROUP BY status', [p.buyer.id]);
      expect(byStatus.rows).toEqual([{ status: 'completed', n: p.done }]);
    }
    await expectLedgerClean(app);

    // Every 503's request-log row was written once the database was back.
    const gateway = app.broker.getLocalService('gateway') as any;
    await gateway.requestLog.flush();
    const logged = await gateway.db.query('SELECT request_id, status, error_code FROM gateway.request_log WHERE request_id = ANY($1)', [m.failedRequestIds]);
    expect(logged.rows.length).toBe(m.failedRequestIds.length);
    expect(logged.rows.every((r: any) => r.status === 503 && r.error_code === 'service_unavailable')).toBe(true);

    expect(flows).toBeGreaterThan(0);
    expect(Object.keys(m.firstTryFailures).filter((k) => !k.startsWith('503 service_unavailable'))).toEqual([]);
    expect(m.badUnavailable).toBe(0);
    expect(m.conflictAfterSuccess).toBe(0);
    expect(m.failedAfterRetries).toBe(0);
    // No call waits for the bus's 15 s request timeout.
    expect(m.longestCallMs).toBeLessThan(app.config.requestTimeoutMs);
  }, 120_000);
});
