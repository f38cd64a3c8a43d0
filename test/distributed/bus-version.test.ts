/**
 * moleculer 0.15 speaks bus protocol v5; a 0.14 node speaks v4. By default a v4 packet is refused (a stray old
 * process cannot join); with BUS_VERSION_CHECK=false, for a rolling upgrade, it is taken (docs/operations.md).
 */
import type { ServiceBroker } from 'moleculer';
import { connect } from 'nats';
import { createBroker } from '../../packages/broker';
import { loadConfig } from '../../packages/config';
import { base62 } from '../../packages/ids';
import { describeDistributed, eventually, TEST_DATABASE_URL, TEST_NATS_URL } from '../kit';

/** The INFO packet a node broadcasts when it joins; a moleculer 0.14 node's carries protocol version 4. */
function info(sender: string, ver = '4') {
  return {
    ver, sender, instanceID: `i-${sender}`, hostname: 'old', ipList: [], client: { type: 'nodejs', version: '0.14.36', langVersion: 'v20.0.0' },
    config: {}, metadata: {}, seq: 1, services: [],
  };
}

async function brokerHearingV4(busVersionCheck: string | undefined): Promise<{ broker: ServiceBroker; announce(sender: string, ver?: string): Promise<void>; close(): Promise<void> }> {
  const namespace = `v${base62(8)}`;
  // No service runs here: the database URL only satisfies the config's check for a distributed process.
  const config = loadConfig({
    TRANSPORTER: TEST_NATS_URL!, DATABASE_URL: TEST_DATABASE_URL ?? 'postgres://127.0.0.1/unused', NAMESPACE: namespace, LOG_LEVEL: 'fatal', NODE_ENV: 'test',
    ...(busVersionCheck === undefined ? {} : { BUS_VERSION_CHECK: busVersionCheck }),
  });
  const broker = createBroker({ config, services: [] });
  await broker.start();
  const nc = await connect({ servers: TEST_NATS_URL! });
  return {
    broker,
    async announce(sender, ver) {
      nc.publish(`MOL-${namespace}.INFO`, new TextEncoder().encode(JSON.stringify(info(sender, ver))));
      await nc.flush();
    },
    async close() {
      await nc.close();
      await broker.stop();
    },
  };
}

describeDistributed('bus protocol version (moleculer 0.15 = v5, 0.14 = v4)', () => {
  it('refuses a v4 node by default', async () => {
    const b = await brokerHearingV4(undefined);
    try {
      await b.announce('old.node-1');
      // The same packet at this broker's own version (5), sent after it, is taken: so the v4 one was heard and refused.
      await b.announce('new.node-2', b.broker.PROTOCOL_VERSION);
      await eventually(async () => b.broker.registry.nodes.get('new.node-2'), 5_000, 50);
      expect(b.broker.PROTOCOL_VERSION).toBe('5');
      expect(b.broker.registry.nodes.get('old.node-1')).toBeUndefined();
    } finally {
      await b.close();
    }
  }, 30_000);

  it('takes a v4 node with BUS_VERSION_CHECK=false (a rolling upgrade from 0.14)', async () => {
    const b = await brokerHearingV4('false');
    try {
      await b.announce('old.node-1');
      const node = await eventually(async () => b.broker.registry.nodes.get('old.node-1'), 5_000, 50);
      expect(node.available).toBe(true);
    } finally {
      await b.close();
    }
  }, 30_000);
});
