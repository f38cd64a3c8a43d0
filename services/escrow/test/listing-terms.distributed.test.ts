/**
 * Issue #22 on the real shape: listings and escrow in their own processes, over NATS JetStream with bus auth
 * and a PostgreSQL role each. A price change travels as listings' terms_changed event into escrow's copy,
 * and the next purchase pays the new price; the ledger audit ends it.
 */
import type { ServiceBroker } from 'moleculer';
import { Client } from 'pg';
import { createBroker } from '../../../packages/broker';
import { loadConfig } from '../../../packages/config';
import { ApiClient, clusterBroker, describeCluster, eventually, startCluster, TEST_DATABASE_URL, type Cluster } from '../../../test/kit';
import { creditGas, expectLedgerClean } from '../../../test/kit/ledger';
import { LISTING_DESCRIPTION } from './helpers';

describeCluster('listing terms carried by events (separate processes)', () => {
  let cluster: Cluster;
  let client: ServiceBroker;
  let payer: ServiceBroker;
  let api: ApiClient;

  beforeAll(async () => {
    cluster = await startCluster({ fresh: true, port: 0, postgresUrl: TEST_DATABASE_URL!, env: { NODE_ENV: 'test', HOST: '127.0.0.1' } });
    // The test's brokers: the gateway's credentials audit; payments' credit gas (payments' row of the call table).
    client = createBroker({ config: loadConfig({ ...cluster.clientEnv('gateway'), DATA_DIR: 'memory://', LOG_LEVEL: 'error', NODE_ENV: 'test' }), services: [] });
    await client.start();
    await client.waitForServices(['ledger', 'escrow'], 30_000);
    payer = await clusterBroker(cluster, 'payments', ['ledger']);
    api = new ApiClient(cluster.gateways[0]);
  }, 240_000);

  afterAll(async () => {
    await client?.stop();
    await payer?.stop();
    await cluster?.stop();
  }, 60_000);

  it('a price change reaches escrow\'s copy and the next purchase pays it', async () => {
    const seller = await api.register('Terms Seller');
    const buyer = await api.register('Terms Buyer');
    await creditGas(payer, buyer.agent.id, 2000);
    const { listing } = await api.ok(
      'list_service',
      { title: 'Write Jest unit tests for a TypeScript module', description: LISTING_DESCRIPTION, priceGas: 300, category: 'codegen' },
      seller.apiKey,
    );
    const first = (await api.ok('purchase_service', { listingId: listing.id }, buyer.apiKey)).purchase;
    expect(first.priceGas).toBe(300);
    await api.ok('update_service', { listingId: listing.id, priceGas: 400 }, seller.apiKey);
    const db = new Client({ connectionString: cluster.adminDatabaseUrl });
    await db.connect();
    try {
      const copy = await eventually(async () => {
        const r = await db.query<{ price_gas: number }>('SELECT price_gas FROM escrow.listing_terms WHERE listing_id = $1', [listing.id]);
        return r.rows[0]?.price_gas === 400 ? r.rows[0] : null;
      }, 10_000, 50);
      expect(copy.price_gas).toBe(400);
    } finally {
      await db.end();
    }
    const second = (await api.ok('purchase_service', { listingId: listing.id }, buyer.apiKey)).purchase;
    expect(second.priceGas).toBe(400);
    for (const p of [first, second]) await api.ok('request_refund', { purchaseId: p.id }, buyer.apiKey);
    // The holds are voided from escrow's refunded events (durable, published off the write path): a moment later.
    await eventually(async () => {
      const w = await api.ok('wallet', {}, buyer.apiKey);
      return w.gasBalance === 2000 && w.heldGas === 0;
    }, 20_000, 100);
    await expectLedgerClean(client);
  }, 120_000);
});
