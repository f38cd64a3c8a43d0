/**
 * Purchases as MCP tasks across two gateway replicas (issue #26): every service its own process
 * (packages/cluster: NATS with bus auth, a PostgreSQL role per service). The official SDK client buys
 * as a task through replica A; tasks/get, tasks/result, the seller's delivery and the refund go
 * through replica B, which never saw the task created — the task is the purchase, not process memory.
 */
import type { ServiceBroker } from 'moleculer';
import { createBroker } from '../../packages/broker';
import { loadConfig } from '../../packages/config';
import { ApiClient, describeCluster, eventually, startCluster, TEST_DATABASE_URL, type Cluster } from '../kit';
import { openSandboxCheckout, submitSandboxForm } from '../kit/checkout';
import { expectLedgerClean } from '../kit/ledger';
import { runPurchaseTasks } from '../../services/gateway/test/mcp-tasks-scenario';

describeCluster('purchases as MCP tasks across two gateway replicas (separate processes, NATS + PostgreSQL)', () => {
  let cluster: Cluster;
  let api: ApiClient;
  let auditor: ServiceBroker | null = null;

  beforeAll(async () => {
    cluster = await startCluster({
      fresh: true,
      port: 0,
      postgresUrl: TEST_DATABASE_URL!,
      services: ['gateway', 'agents', 'ledger', 'listings', 'payments', 'escrow'],
      replicasOf: { gateway: 2 },
      env: { NODE_ENV: 'test', HOST: '127.0.0.1', LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn', SWEEP_INTERVAL_MS: '0' },
    });
    api = new ApiClient(cluster.gateways[0]);
  }, 240_000);

  afterAll(async () => {
    await auditor?.stop().catch(() => undefined);
    await cluster?.stop();
  }, 120_000);

  test('buy as a task on A; on B: working → seller delivers → completed → tasks/result is the delivery; a refund fails its task; others see nothing; audit clean', async () => {
    const { servedBy } = await runPurchaseTasks(
      {
        api,
        replicas: cluster.gateways,
        // The product's way: buy_gas, a human approves on the sandbox checkout page, the wallet shows the gas.
        async fund(agent) {
          const buy = await api.ok('buy_gas', { packId: 'builder' }, agent.apiKey);
          expect((await submitSandboxForm(await openSandboxCheckout(buy.checkoutUrl), 'approve')).status).toBe(200);
          await eventually(async () => (await api.ok('wallet', {}, agent.apiKey)).gasBalance >= 1000, 20_000, 100);
        },
        async audit() {
          // Settlements travel over escrow's durable events: wait for the ledger to have none open but the audit's own view.
          const env = cluster.clientEnv('gateway');
          auditor = createBroker({
            config: loadConfig({ ...env, DATA_DIR: 'memory://', LOG_LEVEL: 'fatal', NODE_ENV: 'test' }),
            services: [],
            brokerOptions: { requestTimeout: 10_000 },
          });
          await auditor.start();
          await auditor.waitForServices(['ledger', 'escrow'], 30_000);
          await eventually(
            async () => {
              try {
                await expectLedgerClean({ call: (action, params) => auditor!.call(action, params) });
                return true;
              } catch {
                return false;
              }
            },
            20_000,
            250,
          );
          await expectLedgerClean({ call: (action, params) => auditor!.call(action, params) });
        },
      },
      'cluster',
    );
    // Both replicas answered this session's requests.
    expect(servedBy.sort()).toEqual(cluster.gateways.map((g) => new URL(g).host).sort());
  }, 180_000);
});
