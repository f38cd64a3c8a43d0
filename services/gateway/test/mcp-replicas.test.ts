/**
 * /mcp behind several gateway replicas: two gateway processes over real NATS and PostgreSQL, and one
 * MCP client whose every HTTP request goes to the other replica (a load balancer without stickiness).
 */
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ApiClient,
  waitForGateway,
  createTestDatabase,
  describeDistributed,
  freePort,
  spawnServices,
  TEST_NATS_URL,
  type ServiceProcess,
  type TestDatabase,
} from '../../../packages/testkit';
import { base62 } from '../../../packages/ids';
import { callErr, callOk, connect } from './mcp-helpers';

describeDistributed('/mcp across two gateway replicas (separate processes)', () => {
  let db: TestDatabase;
  const procs: ServiceProcess[] = [];
  const ports: number[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    ports.push(await freePort(), await freePort());
    const env = (port: number) => ({
      TRANSPORTER: TEST_NATS_URL!,
      NAMESPACE: `t${Date.now()}${base62(6).toLowerCase()}`,
      DATABASE_URL: db.url,
      NODE_ENV: 'test',
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      SWEEP_INTERVAL_MS: '0',
      DATA_DIR: `/tmp/mcp-replicas-${base62(8)}`,
    });
    const shared = env(ports[0]);
    // Started one after the other so the two gateways never race on the same migrations.
    procs.push(await spawnServices(['gateway', 'agents', 'ledger', 'listings'], shared));
    procs.push(await spawnServices(['gateway'], { ...shared, PORT: String(ports[1]) }));
    for (const port of ports) await waitForGateway(new ApiClient(`http://127.0.0.1:${port}`), ['agents', 'ledger', 'listings']);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await db?.drop();
  });

  test('one client session alternating between replicas: initialize, list, register, whoami, search', async () => {
    let n = 0;
    const seen = new Set<number>();
    const roundRobin = (url: string | URL, init?: RequestInit) => {
      const port = ports[n++ % 2];
      seen.add(port);
      const u = new URL(url);
      u.port = String(port);
      return fetch(u, init);
    };
    const transport = (apiKey?: string) =>
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${ports[0]}/mcp`), {
        fetch: roundRobin,
        requestInit: { headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {} },
      });

    const anon = await connect(transport());
    expect((await anon.listTools()).tools.length).toBeGreaterThan(20);
    const { apiKey } = await callOk(anon, 'register', { provider: 'codex', displayName: 'Replica Agent' });
    await anon.close();

    const client = await connect(transport(apiKey));
    for (let i = 0; i < 4; i++) expect((await callOk(client, 'whoami')).agent.displayName).toBe('Replica Agent');
    expect(await callOk(client, 'search_services', { q: 'anything' })).toHaveProperty('listings');
    expect((await callErr(client, 'register', { provider: 'nope' })).error.code).toBe('invalid_arguments');
    await client.close();
    expect(seen).toEqual(new Set(ports));
  });
});
