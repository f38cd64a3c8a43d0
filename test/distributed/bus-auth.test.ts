/**
 * Least privilege on the bus and in the database, on a cluster started like `npm run cluster`
 * (packages/cluster): every service its own process with its own NATS user and PostgreSQL role.
 * (a) a connection without valid credentials is refused; (b) a broker with the agents service's
 * credentials cannot mint gas, and a caller the table does not allow is refused by the server within
 * 2 s; (c) the ledger's database credentials cannot read escrow's tables. And a buyer/seller journey
 * through the gateway works, with a clean ledger audit.
 */
import type { ServiceBroker } from 'moleculer';
import { connect } from 'nats';
import { Client } from 'pg';
import { createBroker } from '../../packages/broker';
import { AuthNatsTransporter } from '../../packages/broker/nats-transporter';
import { loadConfig, type ServiceName } from '../../packages/config';
import { ApiClient, describeCluster, eventually, startCluster, TEST_DATABASE_URL, type Cluster } from '../kit';
import { openSandboxCheckout, submitSandboxForm } from '../kit/checkout';
import { expectLedgerClean } from '../kit/ledger';
import { newAgent, newListing } from '../../services/escrow/test/helpers';

describeCluster('bus and database least privilege (cluster with auth, real NATS and PostgreSQL)', () => {
  let cluster: Cluster;
  let api: ApiClient;
  const brokers: ServiceBroker[] = [];

  const brokerAs = async (service: ServiceName, opts: { precheck?: boolean } = {}) => {
    const env = cluster.clientEnv(service);
    const config = loadConfig({ ...env, DATA_DIR: 'memory://', LOG_LEVEL: 'fatal', NODE_ENV: 'test' });
    const transporter =
      opts.precheck === false
        ? new AuthNatsTransporter({ url: env.TRANSPORTER, user: service, pass: env.NATS_PASSWORD, namespace: env.NAMESPACE, precheck: false })
        : undefined;
    const broker = createBroker({ config, services: [], brokerOptions: { ...(transporter ? { transporter: transporter as any } : {}), requestTimeout: 10_000 } });
    brokers.push(broker);
    await broker.start();
    return broker;
  };

  beforeAll(async () => {
    cluster = await startCluster({
      fresh: true,
      port: 0,
      postgresUrl: TEST_DATABASE_URL!,
      env: { NODE_ENV: 'test', HOST: '127.0.0.1', LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn', SWEEP_INTERVAL_MS: '0' },
    });
    api = new ApiClient(cluster.gateways[0]);
  }, 240_000);

  afterAll(async () => {
    await Promise.all(brokers.map((b) => b.stop().catch(() => undefined)));
    await cluster?.stop();
  }, 120_000);

  it('runs a buyer/seller journey through the gateway, each service as its own role and bus user; the audit is clean', async () => {
    const buyer = await newAgent({ api }, 'Buyer');
    const seller = await newAgent({ api }, 'Seller');
    const buy = await api.ok('buy_gas', { packId: 'starter' }, buyer.apiKey);
    expect((await submitSandboxForm(await openSandboxCheckout(buy.checkoutUrl), 'approve')).status).toBe(200);
    await eventually(async () => (await api.ok('wallet', {}, buyer.apiKey)).gasBalance === 500, 20_000, 100);
    const listing = await newListing({ api }, seller);
    const { purchase } = await api.ok('purchase_service', { listingId: listing.id }, buyer.apiKey);
    await api.ok('deliver_work', { purchaseId: purchase.id, delivery: { summary: 'The tests' } }, seller.apiKey);
    const done = await api.ok('confirm_delivery', { purchaseId: purchase.id }, buyer.apiKey);
    expect(done.purchase.status).toBe('completed');
    expect((await api.ok('wallet', {}, buyer.apiKey)).gasBalance).toBe(250);
    // The seller's share settles from escrow's durable event (JetStream, with the ledger's own consumer).
    await eventually(async () => (await api.ok('wallet', {}, seller.apiKey)).gasBalance > 0, 20_000, 100);
    const gateway = await brokerAs('gateway');
    await gateway.waitForServices(['ledger', 'escrow'], 30_000);
    await expectLedgerClean({ call: (action, params) => gateway.call(action, params) });
  }, 120_000);

  it('(a) refuses a NATS connection without credentials, or with a wrong password', async () => {
    await expect(connect({ servers: cluster.nats.url, reconnect: false })).rejects.toMatchObject({ code: 'AUTHORIZATION_VIOLATION' });
    await expect(connect({ servers: cluster.nats.url, user: 'ledger', pass: 'pwrong', reconnect: false })).rejects.toMatchObject({ code: 'AUTHORIZATION_VIOLATION' });
  });

  it('(b) the agents credentials cannot mint gas: refused at once, no balance changes', async () => {
    const victim = await newAgent({ api }, 'Victim');
    const agents = await brokerAs('agents');
    const t0 = Date.now();
    const err = await agents
      .call('ledger.creditGasPurchase', { key: 'checkout:cko_forged', agentId: victim.id, gas: 1_000_000, sessionId: 'cko_forged', packId: 'starter' })
      .catch((e) => e);
    expect(Date.now() - t0).toBeLessThan(2_000);
    // A service that calls nobody never hears other nodes' INFO: it cannot even find the action.
    expect(err).toMatchObject({ type: expect.stringMatching(/SERVICE_NOT_FOUND|BUS_PERMISSION_DENIED/) });

    // The server itself refuses the publish, whatever the client does (a raw connection as agents).
    const nc = await connect({ servers: cluster.nats.url, user: 'agents', pass: cluster.credentials.agents.natsPassword, reconnect: false });
    const refused = (async () => {
      for await (const s of nc.status()) if (s.type === 'error' && s.data === 'PERMISSIONS_VIOLATION') return (s as any).permissionContext;
    })();
    // Requests go to the ledger node Moleculer's balancer picks: REQ.<ledger node ID> = REQ.ledger.<host>-<pid>-<rand>.
    const ledgerNode = `MOL-${cluster.namespace}.REQ.ledger.forged-1-abc`;
    nc.publish(ledgerNode, new TextEncoder().encode('{}'));
    await expect(refused).resolves.toMatchObject({ operation: 'publish', subject: ledgerNode });
    await nc.close();
    expect((await api.ok('wallet', {}, victim.apiKey)).gasBalance).toBe(0);
  });

  it('(b) a caller whose row does not name the ledger is refused by the server within 2 s with a clear error', async () => {
    const victim = await newAgent({ api }, 'Victim2');
    // listings may call agents only; with the client-side check off, the request reaches the bus.
    const listings = await brokerAs('listings', { precheck: false });
    await listings.waitForServices(['ledger'], 30_000);
    const t0 = Date.now();
    const err = await listings
      .call('ledger.creditGasPurchase', { key: 'checkout:cko_forged2', agentId: victim.id, gas: 1_000_000, sessionId: 'cko_forged2', packId: 'starter' })
      .catch((e) => e);
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect(err).toMatchObject({ type: 'BUS_PERMISSION_DENIED', code: 403, data: { user: 'listings', source: 'server' } });
    expect(err.message).toContain('ledger.creditGasPurchase');
    // With the check on (the default), the call table refuses it before it reaches the bus.
    const checked = await brokerAs('listings');
    await checked.waitForServices(['ledger'], 30_000);
    await expect(checked.call('ledger.balance', { agentId: victim.id })).rejects.toMatchObject({ type: 'BUS_PERMISSION_DENIED', data: { source: 'call-table' } });
    expect((await api.ok('wallet', {}, victim.apiKey)).gasBalance).toBe(0);
  });

  it("a caller allowed to reach a service's nodes cannot call their internal $node actions", async () => {
    const gateway = await brokerAs('gateway');
    await gateway.waitForServices(['ledger'], 30_000);
    const ledgerNode = gateway.registry.getNodeList({ onlyAvailable: true, withServices: false }).find((n: any) => n.id.startsWith('ledger.'))!;
    expect(ledgerNode).toBeDefined();
    await expect(gateway.call('$node.list', {}, { nodeID: ledgerNode.id })).rejects.toMatchObject({ type: 'BUS_PERMISSION_DENIED', code: 403 });
    // Its own are fine.
    await expect(gateway.call('$node.health')).resolves.toBeDefined();
  });

  it('(c) the ledger database credentials cannot read escrow.purchases; its own schema works', async () => {
    const c = new Client({ connectionString: cluster.credentials.ledger.databaseUrl });
    await c.connect();
    try {
      await expect(c.query('SELECT count(*) FROM escrow.purchases')).rejects.toThrow(/permission denied/);
      await expect(c.query('CREATE TABLE public.sneaky (x int)')).rejects.toThrow(/permission denied/);
      const own = await c.query('SELECT count(*)::int AS n FROM ledger.schema_migrations');
      expect(own.rows[0].n).toBeGreaterThan(0);
    } finally {
      await c.end();
    }
  });
});
