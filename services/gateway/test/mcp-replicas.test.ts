/**
 * /mcp behind several gateway replicas: two gateway processes over real NATS and PostgreSQL, and one
 * MCP client whose every HTTP request goes to the other replica (a load balancer without stickiness).
 */
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describeCluster, startCluster, TEST_DATABASE_URL, type Cluster } from '../../../test/kit';
import { callErr, callOk, connect } from './mcp-helpers';

describeCluster('/mcp across two gateway replicas (separate processes)', () => {
  let cluster: Cluster;
  const ports: number[] = [];

  beforeAll(async () => {
    cluster = await startCluster({
      fresh: true,
      port: 0,
      postgresUrl: TEST_DATABASE_URL!,
      services: ['gateway', 'agents', 'ledger', 'listings'],
      replicasOf: { gateway: 2 },
      env: { NODE_ENV: 'test', HOST: '127.0.0.1', SWEEP_INTERVAL_MS: '0' },
    });
    ports.push(...cluster.gatewayPorts);
  }, 240_000);

  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

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
