/**
 * The gas journey with services in separate OS processes over real NATS and PostgreSQL:
 * gateway+agents, ledger, payments. Buy gas through the sandbox page, hold concurrently from
 * another node, settle through a durable JetStream event, and audit.
 */
import type { ServiceBroker } from 'moleculer';
import { ApiClient, describeCluster, eventually, startCluster, TEST_DATABASE_URL, type Cluster } from '../../../test/kit';
import { createBroker } from '../../../packages/broker';
import { loadConfig } from '../../../packages/config';
import { openSandboxCheckout, submitSandboxForm } from '../../../test/kit/checkout';
import { settled, uid } from './helpers';

describeCluster('ledger and payments over NATS (separate processes, bus auth, a role per service)', () => {
  let cluster: Cluster;
  let client: ServiceBroker;
  let api: ApiClient;
  let baseUrl: string;
  let adminToken: string;

  beforeAll(async () => {
    cluster = await startCluster({
      fresh: true,
      port: 0,
      postgresUrl: TEST_DATABASE_URL!,
      services: ['gateway', 'agents', 'ledger', 'payments'],
      env: { NODE_ENV: 'test', HOST: '127.0.0.1', SWEEP_INTERVAL_MS: '0' },
    });
    baseUrl = cluster.gateways[0];
    adminToken = cluster.adminToken;
    // The test plays escrow: it holds and voids on the ledger and publishes escrow's durable events (its credentials allow both).
    client = createBroker({
      config: loadConfig({ ...cluster.clientEnv('escrow'), DATA_DIR: 'memory://', LOG_LEVEL: 'error', NODE_ENV: 'test' }),
      services: [],
    });
    await client.start();
    await client.waitForServices(['ledger', 'agents'], 30_000);
    api = new ApiClient(baseUrl);
  }, 240_000);

  afterAll(async () => {
    await client?.stop();
    await cluster?.stop();
  }, 60_000);

  it('buys gas in the sandbox, holds concurrently without overdrawing, settles from a JetStream event, audits clean', async () => {
    const { apiKey, agent } = await api.register('Distributed Buyer');
    const buy = await api.ok('buy_gas', { packId: 'starter' }, apiKey);
    expect(buy.checkoutUrl.startsWith(`${baseUrl}/checkout/sandbox/cko_`)).toBe(true);
    const page = await api.get(new URL(buy.checkoutUrl).pathname);
    expect(page.text).toContain('Distributed Buyer');
    const form = await openSandboxCheckout(buy.checkoutUrl);
    const approve = async () => (await submitSandboxForm(form, 'approve')).status;
    expect((await Promise.all([approve(), approve(), approve()])).sort()).toEqual([200, 409, 409]);
    await eventually(async () => (await api.ok('wallet', {}, apiKey)).gasBalance === 500);

    // Concurrent holds from another node: 500 gas covers five holds of 100, never more.
    const seller = uid('agt');
    const purchases = Array.from({ length: 12 }, () => uid('pur'));
    const holds = settled(
      await Promise.allSettled(
        purchases.map((p) => client.call('ledger.hold', { key: `purchase:${p}:hold`, purchaseId: p, buyerId: agent.id, sellerId: seller, amountGas: 100 })),
      ),
    );
    expect(holds.ok).toHaveLength(5);
    for (const e of holds.errors) expect(e).toMatchObject({ type: 'insufficient_gas', code: 402 });
    const held = holds.ok.map((x: any) => x.purchaseId as string);

    // A replayed hold moves nothing.
    const replays = await Promise.all(
      Array.from({ length: 5 }, () => client.call<any, any>('ledger.hold', { key: `purchase:${held[0]}:hold`, purchaseId: held[0], buyerId: agent.id, sellerId: seller, amountGas: 100 })),
    );
    expect(replays.every((r) => r.replayed)).toBe(true);

    // escrow.purchase.completed over JetStream, delivered twice: settled once.
    const event = { eventId: uid('evt'), topic: 'escrow.purchase.completed', occurredAt: new Date().toISOString(), data: { purchaseId: held[0], sellerId: seller } };
    await (client as any).sendToChannel('escrow.purchase.completed', event);
    await (client as any).sendToChannel('escrow.purchase.completed', event);
    await eventually(async () => (await client.call<any, any>('ledger.balance', { agentId: seller })).gasBalance === 90, 20_000, 100);
    // A refund voids its hold from escrow's refunded event (escrow's row of the call table has no ledger.void).
    const refunded = { eventId: uid('evt'), topic: 'escrow.purchase.refunded', occurredAt: new Date().toISOString(),
      data: { purchaseId: held[1], buyerId: agent.id, sellerId: seller, listingId: uid('lst'), priceGas: 100, refundedAt: new Date().toISOString() } };
    await (client as any).sendToChannel('escrow.purchase.refunded', refunded);
    await eventually(async () => (await client.call<any, any>('ledger.getHold', { purchaseId: held[1] }))?.status === 'voided', 20_000, 100);

    const wallet = await api.ok('wallet', {}, apiKey);
    expect(wallet).toMatchObject({ gasBalance: 100, heldGas: 300 });

    const res = await fetch(`${baseUrl}/api/admin/ledger/audit`, { headers: { authorization: `Bearer ${adminToken}` } });
    expect(res.status).toBe(200);
    const audit = ((await res.json()) as any).result;
    expect(audit.checks.filter((c: any) => !c.ok)).toEqual([]);
    expect(audit.ok).toBe(true);
    expect(await client.call<any, any>('ledger.balance', { agentId: seller })).toEqual({ gasBalance: 90 });
  });
});
