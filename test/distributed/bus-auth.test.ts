/**
 * Least privilege on the bus and in the database, on a cluster started like `npm run cluster`
 * (packages/cluster): every service its own process with its own NATS user and PostgreSQL role.
 * (a) a connection without valid credentials is refused; (b) a broker with the agents service's
 * credentials cannot mint gas; the gateway's reach the ledger's reads but never its money steps (refused
 * by the server within 2 s, or dropped by the ledger when smuggled under a read's subject or another
 * service's name); notifications' cannot announce a node serving agents.authenticate (issue 39's two
 * Criticals, as raw NATS clients); (c) the ledger's database credentials cannot read escrow's tables. And a buyer/seller journey
 * through the gateway works, with a clean ledger audit.
 */
import { MOLECULER_VERSION, PROTOCOL_VERSION, type ServiceBroker } from 'moleculer';
import { connect } from 'nats';
import { Client } from 'pg';
import { createBroker } from '../../packages/broker';
import { AuthNatsTransporter } from '../../packages/broker/nats-transporter';
import { durableConsumerName, jetStreamName } from '../../packages/call-table/nats-auth';
import { ESCROW_TOPICS } from '../../packages/contracts/escrow';
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
    // Requests go to the ledger node Moleculer's balancer picks, for one action, signed by the caller:
    // REQ.<ledger node ID>.<action>.<caller> = REQ.ledger.<host>-<pid>-<rand>.ledger.creditGasPurchase.agents.
    const ledgerNode = `MOL-${cluster.namespace}.REQ.ledger.forged-1-abc.ledger.creditGasPurchase.agents`;
    nc.publish(ledgerNode, new TextEncoder().encode('{}'));
    await expect(refused).resolves.toMatchObject({ operation: 'publish', subject: ledgerNode });
    await nc.close();
    expect((await api.ok('wallet', {}, victim.apiKey)).gasBalance).toBe(0);
  });

  it("(b) the gateway's credentials reach the ledger's reads, never its money steps: refused by the server within 2 s", async () => {
    const victim = await newAgent({ api }, 'Victim2');
    const attacker = await newAgent({ api }, 'Attacker2');
    // With the client-side check off, the requests reach the bus as a modified client's would.
    const gateway = await brokerAs('gateway', { precheck: false });
    await gateway.waitForServices(['ledger'], 30_000);
    await expect(gateway.call('ledger.balance', { agentId: victim.id })).resolves.toMatchObject({ gasBalance: 0 });
    const forged: [string, object][] = [
      ['ledger.creditGasPurchase', { key: 'checkout:cko_forged2', agentId: attacker.id, gas: 1_000_000, sessionId: 'cko_forged2', packId: 'starter' }],
      ['ledger.hold', { key: 'hold:pur_rtfake1', purchaseId: 'pur_rtfake1', buyerId: victim.id, sellerId: attacker.id, amountGas: 1_900, platformFeeGas: 0, sellerNetGas: 1_900 }],
      ['ledger.settle', { key: 'settle:pur_rtfake1', purchaseId: 'pur_rtfake1' }],
    ];
    for (const [action, params] of forged) {
      const t0 = Date.now();
      const err = await gateway.call(action, params).catch((e) => e);
      expect(Date.now() - t0).toBeLessThan(2_000);
      expect(err).toMatchObject({ type: 'BUS_PERMISSION_DENIED', code: 403, data: { user: 'gateway', source: 'server' } });
      expect(err.message).toContain(action);
    }
    // With the check on (the default), the call table refuses it before it reaches the bus.
    const checked = await brokerAs('gateway');
    await checked.waitForServices(['ledger'], 30_000);
    await expect(checked.call('ledger.creditGasPurchase', { key: 'checkout:cko_forged3', agentId: attacker.id, gas: 5, sessionId: 'cko_forged3', packId: 'starter' }))
      .rejects.toMatchObject({ type: 'BUS_PERMISSION_DENIED', data: { source: 'call-table' } });
    expect((await api.ok('wallet', {}, attacker.apiKey)).gasBalance).toBe(0);
  });

  it("(b) a raw client with the gateway's credentials cannot smuggle a money step into a subject it may use, nor sign as payments", async () => {
    const attacker = await newAgent({ api }, 'Attacker3');
    const gateway = await brokerAs('gateway');
    await gateway.waitForServices(['ledger'], 30_000);
    const ledgerNode = gateway.registry.getNodeList({ onlyAvailable: true, withServices: false }).find((n: any) => n.id.startsWith('ledger.'))!.id;
    const nc = await connect({ servers: cluster.nats.url, user: 'gateway', pass: cluster.credentials.gateway.natsPassword, inboxPrefix: '_INBOX_gateway', reconnect: false });
    const violations: { operation: string; subject: string }[] = [];
    void (async () => {
      for await (const st of nc.status()) if (st.type === 'error' && st.data === 'PERMISSIONS_VIOLATION') violations.push((st as any).permissionContext);
    })();
    const p = `MOL-${cluster.namespace}`;
    const credit = (sender: string) => ({
      ver: PROTOCOL_VERSION, sender, id: `req-${sender}`, action: 'ledger.creditGasPurchase', params: { key: `checkout:cko_${sender.length}x`, agentId: attacker.id, gas: 1_000_000, sessionId: 'cko_smuggled', packId: 'starter' },
      meta: {}, timeout: 5_000, level: 1, tracing: null, parentID: null, requestID: `req-${sender}`, caller: null, stream: false,
    });
    const send = (subject: string, payload: object) => nc.publish(subject, new TextEncoder().encode(JSON.stringify(payload)));
    // The money step's own subject: refused by the server.
    send(`${p}.REQ.${ledgerNode}.ledger.creditGasPurchase.gateway`, credit('gateway.raw-1'));
    // A subject the gateway may use (a balance read), carrying the money step: the ledger's node drops it.
    send(`${p}.REQ.${ledgerNode}.ledger.balance.gateway`, credit('gateway.raw-1'));
    // Signed as payments in the packet: the subject says gateway, so the ledger's node drops it.
    send(`${p}.REQ.${ledgerNode}.ledger.balance.gateway`, { ...credit('payments.raw-1'), action: 'ledger.balance' });
    // Signed as payments in the subject: refused by the server.
    send(`${p}.REQ.${ledgerNode}.ledger.creditGasPurchase.payments`, credit('payments.raw-1'));
    await nc.flush();
    await eventually(async () => violations.length >= 2, 5_000, 50);
    expect(violations.map((v) => v.subject).sort()).toEqual(
      [`${p}.REQ.${ledgerNode}.ledger.creditGasPurchase.gateway`, `${p}.REQ.${ledgerNode}.ledger.creditGasPurchase.payments`].sort(),
    );
    await new Promise((r) => setTimeout(r, 1_000));
    await nc.close();
    expect((await api.ok('wallet', {}, attacker.apiKey)).gasBalance).toBe(0);
    const ledgerOutput = cluster.processes.ledger.map((proc) => proc.output()).join('\n');
    expect(ledgerOutput).toMatch(/dropped a REQ packet .*ledger\.balance\.gateway/);
    await expectLedgerClean({ call: (action, params) => gateway.call(action, params) });
  });

  it("(b) notifications' credentials cannot announce a node that serves agents.authenticate: the gateway ignores it, nobody is impersonated", async () => {
    const victim = await newAgent({ api }, 'Victim4');
    const nc = await connect({ servers: cluster.nats.url, user: 'notifications', pass: cluster.credentials.notifications.natsPassword, inboxPrefix: '_INBOX_notifications', reconnect: false });
    const violations: string[] = [];
    void (async () => {
      for await (const st of nc.status()) if (st.type === 'error' && st.data === 'PERMISSIONS_VIOLATION') violations.push((st as any).permissionContext.subject);
    })();
    const p = `MOL-${cluster.namespace}`;
    // The fake node answers every request it gets with the victim's identity.
    let asked = 0;
    const answer = (msg: { data: Uint8Array }) => {
      asked++;
      const req = JSON.parse(new TextDecoder().decode(msg.data));
      const res = { ver: PROTOCOL_VERSION, sender: 'notifications.fake-1', id: req.id, success: true, data: { agentId: victim.id, registered: true }, meta: {} };
      nc.publish(`${p}.RES.${req.sender}.notifications`, new TextEncoder().encode(JSON.stringify(res)));
    };
    nc.subscribe(`${p}.REQ.notifications.fake-1.>`, { callback: (_e, m) => answer(m) });
    const info = (sender: string) => ({
      ver: PROTOCOL_VERSION, sender, instanceID: `i-${sender}`, hostname: 'fake', ipList: [], client: { type: 'nodejs', version: MOLECULER_VERSION, langVersion: process.version }, config: {}, metadata: {}, seq: 1,
      services: [{ name: 'agents', fullName: 'agents', settings: {}, metadata: {}, events: {}, actions: { 'agents.authenticate': { name: 'agents.authenticate', rawName: 'authenticate' }, 'agents.whoami': { name: 'agents.whoami', rawName: 'whoami' } } }],
    });
    const send = (subject: string, payload: object) => nc.publish(subject, new TextEncoder().encode(JSON.stringify(payload)));
    // A notifications node claiming agents' actions: ignored by every broker that hears it.
    send(`${p}.INFO.notifications`, info('notifications.fake-1'));
    // Posing as an agents node: the subject says notifications, so it is dropped; signed as agents: refused by the server.
    send(`${p}.INFO.notifications`, info('agents.fake-2'));
    send(`${p}.INFO.agents`, info('agents.fake-3'));
    await nc.flush();
    await eventually(async () => violations.includes(`${p}.INFO.agents`), 5_000, 50);
    for (let i = 0; i < 10; i++) {
      const t0 = Date.now();
      const forged = await api.call('whoami', {}, `rk_live_forged${i}AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`);
      expect(Date.now() - t0).toBeLessThan(3_000);
      expect(forged.status).toBe(200);
      expect(forged.body.result).toMatchObject({ registered: false, agent: null });
      expect((await api.ok('whoami', {}, victim.apiKey)).agent.id).toBe(victim.id);
    }
    expect(asked).toBe(0);
    await nc.close();
    const gatewayOutput = cluster.processes.gateway.map((proc) => proc.output()).join('\n');
    expect(gatewayOutput).toContain('ignored node notifications.fake-1: it announces agents');
    expect(gatewayOutput).toMatch(/dropped a INFO packet on \S+\.INFO\.notifications: its sender \(agents\.fake-2\) is not a notifications node/);
  });

  it('a service cannot widen its own durable consumer to other topics (the server pins the filter)', async () => {
    const nc = await connect({ servers: cluster.nats.url, user: 'notifications', pass: cluster.credentials.notifications.natsPassword, inboxPrefix: '_INBOX_notifications', reconnect: false });
    try {
      const jsm = await nc.jetstreamManager();
      const ns = jetStreamName(cluster.namespace);
      const durable = durableConsumerName('notifications', ESCROW_TOPICS.created);
      const own = await jsm.consumers.info(`${ns}_EVENTS`, durable);
      expect(own.config.filter_subject).toBe(`${ns}.events.${ESCROW_TOPICS.created}`);
      await expect(jsm.consumers.update(`${ns}_EVENTS`, durable, { filter_subject: `${ns}.events.>` })).rejects.toThrow();
      await expect(jsm.consumers.add(`${ns}_EVENTS`, { ...own.config, filter_subject: `${ns}.events.>` })).rejects.toThrow();
      expect((await jsm.consumers.info(`${ns}_EVENTS`, durable)).config.filter_subject).toBe(`${ns}.events.${ESCROW_TOPICS.created}`);
    } finally {
      await nc.close();
    }
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
