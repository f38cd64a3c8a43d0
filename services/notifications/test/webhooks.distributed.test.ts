/**
 * Never lost across a restart: the notifications service runs as its own OS process over real NATS
 * JetStream and PostgreSQL; it is SIGKILLed with a delivery pending (the receiver was failing) and
 * events are produced while it is down; after a restart the receiver gets every event, each signed.
 */
import type { ServiceBroker } from 'moleculer';
import { createBroker } from '../../../packages/broker';
import { loadConfig } from '../../../packages/config';
import { ApiClient, clusterBroker, describeCluster, eventually, startCluster, TEST_DATABASE_URL, type Cluster } from '../../../test/kit';
import { creditGas, expectLedgerClean } from '../../../test/kit/ledger';
import { LISTING_DESCRIPTION } from '../../escrow/test/helpers';
import { readmeVerify, startReceiver, type Receiver } from './receiver';

describeCluster('webhooks across a restart of the notifications process', () => {
  let cluster: Cluster;
  let client: ServiceBroker;
  let payer: ServiceBroker;
  let api: ApiClient;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    cluster = await startCluster({
      fresh: true,
      port: 0,
      postgresUrl: TEST_DATABASE_URL!,
      env: { NODE_ENV: 'test', HOST: '127.0.0.1', SWEEP_INTERVAL_MS: '500', WEBHOOK_ALLOW_PRIVATE: 'true' },
    });
    // The test's brokers: the gateway's credentials audit; payments' credit gas (payments' row of the call table).
    client = createBroker({
      config: loadConfig({ ...cluster.clientEnv('gateway'), DATA_DIR: 'memory://', LOG_LEVEL: 'error', NODE_ENV: 'test' }),
      services: [],
    });
    await client.start();
    await client.waitForServices(['ledger', 'escrow'], 30_000);
    payer = await clusterBroker(cluster, 'payments', ['ledger']);
    api = new ApiClient(cluster.gateways[0]);
  }, 240_000);

  afterAll(async () => {
    await client?.stop();
    await payer?.stop();
    await cluster?.stop();
    await receiver?.close();
  }, 60_000);

  it('gets every signed event although the notifications process was killed mid-way', async () => {
    const seller = await api.register('Webhook Seller');
    const buyer = await api.register('Webhook Buyer');
    const hook = await api.ok('set_webhook', { url: receiver.url, events: ['purchase.created', 'purchase.completed'] }, seller.apiKey);
    await creditGas(payer, buyer.agent.id, 5000);
    const { listing } = await api.ok(
      'list_service',
      { title: 'Write Jest unit tests for a TypeScript module', description: LISTING_DESCRIPTION, priceGas: 300, category: 'codegen' },
      seller.apiKey,
    );
    const buyAndConfirm = async (): Promise<string> => {
      const { purchase } = await api.ok('purchase_service', { listingId: listing.id }, buyer.apiKey);
      await api.ok('deliver_work', { purchaseId: purchase.id, delivery: { summary: 'Done.' } }, seller.apiKey);
      await api.ok('confirm_delivery', { purchaseId: purchase.id }, buyer.apiKey);
      return purchase.id;
    };
    const got = (type: string, purchaseId: string) => receiver.received.filter((e) => e.body.type === type && e.body.data.purchaseId === purchaseId);

    // 1. All up.
    const p1 = await buyAndConfirm();
    await eventually(async () => got('purchase.completed', p1).length > 0, 30_000, 100);

    // 2. The receiver fails, so p2's deliveries stay pending in the table; then the process is killed.
    receiver.failNext(1_000_000);
    const p2 = await buyAndConfirm();
    const posts = receiver.posts();
    await eventually(async () => receiver.posts() >= posts + 1, 30_000, 100);
    await cluster.kill('notifications', 0);

    // 3. Events while notifications is down stay in JetStream.
    const p3 = await buyAndConfirm();
    const p4 = await buyAndConfirm();
    receiver.failNext(0);

    // 4. Restarted: the durable consumer resumes and the sweeper finds p2's pending rows.
    await cluster.restart('notifications', 0);
    for (const p of [p1, p2, p3, p4]) {
      for (const type of ['purchase.created', 'purchase.completed']) {
        const events = await eventually(async () => {
          const e = got(type, p);
          return e.length ? e : null;
        }, 60_000, 200);
        // At least once: a repeat carries the same Market-Event-Id, so the receiver can drop it.
        expect(new Set(events.map((e) => e.eventId)).size).toBe(1);
        for (const e of events) expect(readmeVerify(hook.webhook.secret, e.raw, e.signature)).toBe(true);
      }
    }
    // The gateway may still route to the killed node until its heartbeat times out: retry the read.
    const delivered = await eventually(async () => {
      const r = await api.call('list_webhook_deliveries', { limit: 100 }, seller.apiKey);
      const rows = r.status === 200 ? r.body.result.deliveries.filter((d: any) => d.status === 'delivered') : [];
      return rows.length === 8 ? rows : null;
    }, 60_000, 500);
    expect(delivered).toHaveLength(8);
    await expectLedgerClean(client);
  }, 180_000);
});
