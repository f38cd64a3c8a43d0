/**
 * The crash test (DESIGN §3): gateway, agents, listings, escrow, ledger and payments as separate OS
 * processes over NATS (JetStream) and PostgreSQL. ~200 purchase lifecycles run while the ledger
 * (first run) or escrow (second run) is killed with SIGKILL and restarted. Afterwards every purchase
 * is in a final state that matches its ledger hold, the audit passes, and every balance is exact.
 */
import { auditMoney } from '../../../packages/ledger-audit';
import type { ServiceBroker } from 'moleculer';
import { ApiClient, clusterBroker, describeCluster, eventually, startCluster, TEST_DATABASE_URL, type Cluster } from '../../../test/kit';
import { createBroker } from '../../../packages/broker';
import { loadConfig, type ServiceName } from '../../../packages/config';
import { LISTING_DESCRIPTION } from './helpers';

const LIFECYCLES = 200;
const CONCURRENCY = 8;
const PRICE = 100; // fee 10, seller 90
const BUYERS = 10;
const SELLERS = 4;

interface Agent {
  id: string;
  apiKey: string;
}

describeCluster('escrow crash test (separate processes, NATS JetStream with bus auth, PostgreSQL roles)', () => {
  let cluster: Cluster;
  let api: ApiClient;
  let client: ServiceBroker;
  let payer: ServiceBroker;
  let holdsReader: ServiceBroker;
  const buyers: Agent[] = [];
  const sellers: Array<Agent & { listingId: string }> = [];
  const fundedGas = new Map<string, number>();
  // Every purchase of every run with the outcome the test asked for.
  const outcomes = new Map<string, 'completed' | 'refunded'>();
  const purchaseOwner = new Map<string, { buyerId: string; sellerId: string }>();

  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  beforeAll(async () => {
    cluster = await startCluster({
      fresh: true,
      port: 0,
      postgresUrl: TEST_DATABASE_URL!,
      services: ['ledger', 'escrow', 'agents', 'listings', 'payments', 'gateway'],
      // Short timeouts so a dead node is noticed quickly; sweepers and relays poll often.
      env: { NODE_ENV: 'test', HOST: '127.0.0.1', REQUEST_TIMEOUT_MS: '2500', SWEEP_INTERVAL_MS: '500' },
    });
    api = new ApiClient(cluster.gateways[0]);
    // The test's brokers, each within its row of the call table: the gateway's audit and read balances,
    // payments' fund buyers, escrow's read holds.
    const config = loadConfig({ ...cluster.clientEnv('gateway'), NODE_ID: `crash-test-client-${process.pid}`, DATA_DIR: 'memory://', LOG_LEVEL: 'error', NODE_ENV: 'test' });
    client = createBroker({ config, services: [] });
    await client.start();
    payer = await clusterBroker(cluster, 'payments', ['ledger']);
    holdsReader = await clusterBroker(cluster, 'escrow', ['ledger']);
    await eventually(async () => {
      const r = await api.get('/readyz');
      return r.status === 200 && ['agents', 'listings', 'escrow', 'ledger', 'payments'].every((s) => r.body.services[s]);
    }, 60_000, 250);
    await client.waitForServices(['ledger', 'escrow', 'listings', 'agents'], 30_000);

    for (let i = 0; i < SELLERS; i++) {
      const { apiKey, agent } = await api.register(`Crash Seller ${i}`);
      const r = await api.ok(
        'list_service',
        { title: `Write Jest unit tests for module ${i}`, description: LISTING_DESCRIPTION, priceGas: PRICE, category: 'codegen' },
        apiKey,
      );
      sellers.push({ id: agent.id, apiKey, listingId: r.listing.id });
    }
    for (let i = 0; i < BUYERS; i++) {
      const { apiKey, agent } = await api.register(`Crash Buyer ${i}`);
      buyers.push({ id: agent.id, apiKey });
      fundedGas.set(agent.id, 0);
    }
  }, 300_000);

  afterAll(async () => {
    await client?.stop().catch(() => undefined);
    await payer?.stop().catch(() => undefined);
    await holdsReader?.stop().catch(() => undefined);
    await cluster?.stop();
  }, 60_000);

  async function fund(run: string): Promise<void> {
    const perBuyer = Math.ceil(LIFECYCLES / BUYERS) * PRICE;
    for (const b of buyers) {
      const sessionId = `cs_crash_${run}_${b.id}`;
      await payer.call('ledger.creditGasPurchase', { key: `checkout:${sessionId}`, agentId: b.id, gas: perBuyer, sessionId, packId: 'builder' });
      fundedGas.set(b.id, fundedGas.get(b.id)! + perBuyer);
    }
  }

  /** Retries a call through crashes until `done` accepts its answer (`note` keeps the last refused answer, for the timeout's message). */
  async function until<T>(what: string, fn: (note: (r: { status: number; body: any }) => void) => Promise<T | null>, timeoutMs = 90_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    const note = (r: { status: number; body: any }) => (last = `last answer: ${r.status} ${JSON.stringify(r.body?.error ?? r.body).slice(0, 300)}`);
    for (;;) {
      try {
        const v = await fn(note);
        if (v !== null) return v;
      } catch (err) {
        last = String(err);
      }
      if (Date.now() > deadline) throw new Error(`${what} did not succeed in ${timeoutMs} ms ${last}`);
      await sleep(150);
    }
  }

  async function purchaseStatus(buyer: Agent, purchaseId: string): Promise<string | null> {
    const r = await api.call('get_purchase', { purchaseId }, buyer.apiKey);
    return r.status === 200 ? r.body.result.purchase.status : null;
  }

  async function lifecycle(run: string, i: number): Promise<void> {
    const buyer = buyers[i % BUYERS];
    const seller = sellers[i % SELLERS];
    const refund = i % 5 === 0;
    const purchase = await until(`purchase ${i}`, async (note) => {
      const r = await api.call('purchase_service', { listingId: seller.listingId }, buyer.apiKey, { 'idempotency-key': `${run}-${i}` });
      if (r.status === 200) return r.body.result.purchase as { id: string; status: string };
      if (r.status === 402) throw new Error(`unexpected insufficient_gas: ${JSON.stringify(r.body)}`);
      note(r);
      return null;
    });
    expect(purchase.status).toBe('awaiting_delivery');
    purchaseOwner.set(purchase.id, { buyerId: buyer.id, sellerId: seller.id });
    outcomes.set(purchase.id, refund ? 'refunded' : 'completed');
    await until(`deliver ${i}`, async (note) => {
      const r = await api.call('deliver_work', { purchaseId: purchase.id, delivery: { summary: `delivery ${run} ${i}` } }, seller.apiKey);
      if (r.status === 200) return true;
      note(r);
      if (r.status === 409) return (await purchaseStatus(buyer, purchase.id)) === 'delivered' ? true : null;
      return null;
    });
    await until(`finish ${i}`, async (note) => {
      const r = refund
        ? await api.call('request_refund', { purchaseId: purchase.id }, seller.apiKey)
        : await api.call('confirm_delivery', { purchaseId: purchase.id }, buyer.apiKey);
      if (r.status === 200) return true;
      note(r);
      if (r.status === 409) return (await purchaseStatus(buyer, purchase.id)) === (refund ? 'refunded' : 'completed') ? true : null;
      return null;
    });
  }

  async function runWithCrash(run: string, victim: ServiceName): Promise<void> {
    await fund(run);
    let next = 0;
    let finished = 0;
    const worker = async () => {
      while (next < LIFECYCLES) {
        const i = next++;
        await lifecycle(run, i);
        finished++;
      }
    };
    const crash = (async () => {
      await eventually(async () => finished >= LIFECYCLES / 4, 90_000, 20);
      await cluster.kill(victim, 0); // SIGKILL: no cleanup, in-flight work lost mid-way
      await sleep(1000);
      await cluster.restart(victim, 0);
    })();
    await Promise.all([...Array.from({ length: CONCURRENCY }, worker), crash]);
    expect(finished).toBe(LIFECYCLES);
  }

  async function verifyConsistent(): Promise<void> {
    // Eventually: every escrow event has reached the ledger (JetStream redelivers after the crash).
    await eventually(async () => {
      const holds = await holdsReader.call<Array<{ purchaseId: string }>>('ledger.openHolds');
      return holds.length === 0;
    }, 90_000, 500);
    // The audit reads every account and asks escrow about every open item: give it time, and wait until
    // escrow's restarted node answers (a check skipped because escrow was unreachable proves nothing).
    const audit = await until('a ledger audit with escrow reachable', async () => {
      const a = await auditMoney((action) => client.call(action, {}, { timeout: 30_000 }));
      return a.checks.some((c) => c.skipped) ? null : a;
    });
    if (!audit.ok) throw new Error(`audit failed: ${JSON.stringify(audit.checks.filter((c) => !c.ok))}`);

    // Each purchase ended as the test drove it, with exactly one hold resolved the same way.
    for (const [purchaseId, want] of outcomes) {
      const hold = await holdsReader.call<{ status: string } | null, { purchaseId: string }>('ledger.getHold', { purchaseId });
      expect({ purchaseId, hold: hold?.status }).toEqual({ purchaseId, hold: want === 'completed' ? 'posted' : 'voided' });
    }
    // No duplicate purchases from retries; every balance exact to the gas.
    const earned = new Map<string, number>();
    const spent = new Map<string, number>();
    for (const [purchaseId, want] of outcomes) {
      const { buyerId, sellerId } = purchaseOwner.get(purchaseId)!;
      if (want === 'completed') {
        earned.set(sellerId, (earned.get(sellerId) ?? 0) + PRICE - 10);
        spent.set(buyerId, (spent.get(buyerId) ?? 0) + PRICE);
      }
    }
    for (const b of buyers) {
      const orders = await api.ok('list_orders', { role: 'buyer', limit: 100 }, b.apiKey);
      let all = orders.purchases.length;
      let cursor = orders.nextCursor;
      while (cursor) {
        const page = await api.ok('list_orders', { role: 'buyer', limit: 100, cursor }, b.apiKey);
        all += page.purchases.length;
        cursor = page.nextCursor;
      }
      expect({ buyer: b.id, purchases: all }).toEqual({ buyer: b.id, purchases: [...purchaseOwner.values()].filter((o) => o.buyerId === b.id).length });
      const { gasBalance } = await client.call<{ gasBalance: number }, { agentId: string }>('ledger.balance', { agentId: b.id });
      expect({ buyer: b.id, gasBalance }).toEqual({ buyer: b.id, gasBalance: fundedGas.get(b.id)! - (spent.get(b.id) ?? 0) });
    }
    for (const s of sellers) {
      const { gasBalance } = await client.call<{ gasBalance: number }, { agentId: string }>('ledger.balance', { agentId: s.id });
      expect({ seller: s.id, gasBalance }).toEqual({ seller: s.id, gasBalance: earned.get(s.id) ?? 0 });
    }
  }

  it('kill -9 the ledger in the middle of 200 lifecycles: nothing lost, nothing doubled', async () => {
    await runWithCrash('ledger', 'ledger');
    await verifyConsistent();
  }, 240_000);

  it('kill -9 escrow in the middle of 200 lifecycles: nothing lost, nothing doubled', async () => {
    await runWithCrash('escrow', 'escrow');
    await verifyConsistent();
  }, 240_000);
});
