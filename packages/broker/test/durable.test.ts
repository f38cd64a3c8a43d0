/**
 * The durable-event layer on real NATS JetStream: a group shares the work, a dead replica's
 * messages go to its twin within seconds, replicas may create the same consumer at the same
 * instant, a poison message is dead-lettered, and a long NATS outage drains without restarts.
 */
import { connect, StringCodec } from 'nats';
import { JetStreamDurableTransport, type ChannelSubscription } from '../durable';
import { base62 } from '../../ids';
import { eventually, natsServerAvailable, startPrivateNats, TEST_NATS_URL, type PrivateNats } from '../../../test/kit';
import { jetStreamStatus, startPrivateNatsCluster, type PrivateNatsNode } from '../../cluster/nats-server';

/** The node leading a stream's (only) consumer, from a node's /jsz. */
async function consumerLeader(nodes: PrivateNatsNode[], stream: string): Promise<string> {
  const jsz = (await jetStreamStatus(nodes[0], '?accounts=true&streams=true&consumers=true')) as {
    account_details?: Array<{ stream_detail?: Array<{ name: string; consumer_detail?: Array<{ cluster?: { leader?: string } }> }> }>;
  };
  for (const a of jsz.account_details ?? []) for (const s of a.stream_detail ?? []) if (s.name === stream) return s.consumer_detail?.[0]?.cluster?.leader ?? '';
  return '';
}

const quiet = { info() {}, warn() {}, error() {}, debug() {}, trace() {}, fatal() {} } as any;
const describeNats = TEST_NATS_URL ? describe : describe.skip;
const describePrivateNats = natsServerAvailable() ? describe : describe.skip;
if (!TEST_NATS_URL) console.log('durable.test: TEST_NATS_URL unset, shared-NATS cases skipped');
if (!natsServerAvailable()) console.log('durable.test: no nats-server binary, outage case skipped');

function transport(url: string, namespace: string, extra: Partial<ConstructorParameters<typeof JetStreamDurableTransport>[0]> = {}) {
  const t = new JetStreamDurableTransport({ url, namespace, ackWaitMs: 1_500, fetchExpiresMs: 1_000, shutdownTimeoutMs: 1_000, ...extra });
  t.setLogger(quiet);
  return t;
}

function sub(topic: string, group: string, handler: ChannelSubscription['handler'], maxInFlight?: number): ChannelSubscription {
  return { topic, group, handler, maxInFlight };
}

describeNats('durable events over JetStream (shared NATS)', () => {
  const open: JetStreamDurableTransport[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((t) => t.close().catch(() => undefined)));
  });

  it('shares one group between replicas, and a dead replica only delays what it held', async () => {
    const ns = `t${base62(8)}`;
    const [a, b, producer] = [transport(TEST_NATS_URL!, ns), transport(TEST_NATS_URL!, ns), transport(TEST_NATS_URL!, ns)];
    open.push(a, b, producer);
    await Promise.all([a.connect(), b.connect(), producer.connect()]);
    const seenBy = new Map<number, string>();
    // Replica a takes messages and never finishes them (its process is about to die).
    await a.subscribe(sub('demo.done', 'g', () => new Promise(() => undefined), 3));
    await b.subscribe(sub('demo.done', 'g', async (p: { i: number }) => void seenBy.set(p.i, 'b'), 3));
    for (let i = 0; i < 30; i++) await producer.publish('demo.done', { eventId: `e${i}`, i });
    await eventually(async () => seenBy.size >= 20, 20_000, 50);
    // Kill a: its held messages come back to the group after the ack wait, not never.
    await (a as any).nc.close();
    await eventually(async () => seenBy.size === 30, 20_000, 50);
  }, 40_000);

  it('lets many replicas create the same streams and consumer at the same instant', async () => {
    const ns = `t${base62(8)}`;
    const ts = Array.from({ length: 6 }, () => transport(TEST_NATS_URL!, ns));
    open.push(...ts);
    await Promise.all(ts.map((t) => t.connect()));
    let handled = 0;
    await Promise.all(ts.map((t) => t.subscribe(sub('demo.race', 'g', async () => void handled++))));
    await ts[0].publish('demo.race', { eventId: 'only-once', n: 1 });
    await ts[1].publish('demo.race', { eventId: 'only-once', n: 1 }); // outbox re-publish: deduplicated
    await eventually(async () => handled === 1, 10_000, 50);
    await new Promise((r) => setTimeout(r, 500));
    expect(handled).toBe(1);
  }, 30_000);

  it('retries a failing message, then parks it in the dead-letter stream', async () => {
    const ns = `t${base62(8)}`;
    const t = transport(TEST_NATS_URL!, ns, { maxRetries: 3 });
    open.push(t);
    await t.connect();
    let attempts = 0;
    let good = 0;
    await t.subscribe(
      sub('demo.poison', 'g', async (p: { bad: boolean }) => {
        if (p.bad) {
          attempts++;
          throw new Error('cannot handle this');
        }
        good++;
      }),
    );
    await t.publish('demo.poison', { eventId: 'bad', bad: true });
    await t.publish('demo.poison', { eventId: 'good', bad: false });
    await eventually(async () => attempts === 3 && good === 1, 15_000, 50);
    const nc = await connect({ servers: TEST_NATS_URL! });
    try {
      const jsm = await nc.jetstreamManager();
      const info = await eventually(async () => {
        const i = await jsm.streams.info(t.deadLetterStream);
        return i.state.messages === 1 ? i : null;
      }, 5_000, 50);
      const msg = await jsm.streams.getMessage(t.deadLetterStream, { seq: info.state.first_seq });
      expect(JSON.parse(StringCodec().decode(msg.data))).toMatchObject({ eventId: 'bad' });
      expect(msg.header.get('x-error')).toMatch(/cannot handle this/);
    } finally {
      await nc.close();
    }
    await new Promise((r) => setTimeout(r, 1_000));
    expect(attempts).toBe(3);
  }, 30_000);
});

describePrivateNats('durable events across a NATS outage (private nats-server)', () => {
  let nats: PrivateNats;
  beforeAll(async () => {
    nats = await startPrivateNats();
  }, 30_000);
  afterAll(async () => nats?.dispose(), 30_000);

  it('reports the outage, refuses to publish meanwhile, and drains everything when NATS returns', async () => {
    const ns = `t${base62(8)}`;
    const consumer = transport(nats.url, ns);
    const producer = transport(nats.url, ns);
    try {
      await Promise.all([consumer.connect(), producer.connect()]);
      const seen = new Set<number>();
      await consumer.subscribe(sub('demo.outage', 'g', async (p: { i: number }) => void seen.add(p.i)));
      for (let i = 0; i < 10; i++) await producer.publish('demo.outage', { eventId: `a${i}`, i });
      await eventually(async () => seen.size === 10, 10_000, 50);

      await nats.stop();
      await eventually(async () => !consumer.status().connected && !producer.status().connected, 15_000, 50);
      expect(consumer.status().detail).toMatch(/down/);
      await expect(producer.publish('demo.outage', { eventId: 'x', i: 99 })).rejects.toThrow(/down/);
      // Longer than the reconnect attempts any default would allow.
      await new Promise((r) => setTimeout(r, 12_000));

      await nats.start();
      await eventually(async () => consumer.status().connected && producer.status().connected, 30_000, 100);
      for (let i = 10; i < 20; i++) await producer.publish('demo.outage', { eventId: `b${i}`, i });
      await eventually(async () => seen.size === 20, 30_000, 100);
    } finally {
      await consumer.close().catch(() => undefined);
      await producer.close().catch(() => undefined);
    }
  }, 90_000);
});

describePrivateNats('durable events on a 3-node JetStream cluster (private nats-servers, ADR 0036)', () => {
  let nats: PrivateNats;
  beforeAll(async () => {
    nats = await startPrivateNatsCluster(3);
  }, 60_000);
  afterAll(async () => nats?.dispose(), 60_000);

  it('creates the streams on 3 replicas by default, and the stream admin raises streams created with 1', async () => {
    const ns = `t${base62(8)}`;
    const older = transport(nats.url, ns, { replicas: 1, raiseReplicas: false });
    const admin = transport(nats.url, ns, { raiseReplicas: true });
    try {
      await older.connect();
      await older.subscribe(sub('demo.raise', 'g', async () => undefined));
      const nc = await connect({ servers: nats.url.split(',') });
      const jsm = await nc.jetstreamManager();
      expect((await jsm.streams.info(older.streamName)).config.num_replicas).toBe(1);
      await admin.connect(); // an upgraded deployment's first start
      expect(admin.streamReplicas).toBe(3);
      for (const s of [admin.streamName, admin.deadLetterStream]) expect((await jsm.streams.info(s)).config.num_replicas).toBe(3);
      // The consumer follows its stream's count.
      await eventually(async () => ((await jsm.consumers.info(older.streamName, 'g--demo_raise')).cluster?.replicas?.length ?? 0) === 2, 15_000, 200);
      await nc.close();
    } finally {
      await older.close().catch(() => undefined);
      await admin.close().catch(() => undefined);
    }
  }, 60_000);

  it('keeps consuming within seconds when the node leading the consumer is killed', async () => {
    const ns = `t${base62(8)}`;
    // The production pull settings (not the short ones of the other cases).
    const consumer = transport(nats.url, ns, { fetchExpiresMs: 10_000 });
    const producer = transport(nats.url, ns);
    const received = new Map<number, number>();
    let published = 0;
    let producing = true;
    try {
      await Promise.all([consumer.connect(), producer.connect()]);
      await consumer.subscribe(sub('demo.leader', 'g', async (p: { i: number }) => void (received.has(p.i) || received.set(p.i, Date.now()))));
      // The outbox's way: a publish that fails is tried again.
      const sentAt = new Map<number, number>();
      const producerLoop = (async () => {
        while (producing) {
          const i = published;
          sentAt.set(i, sentAt.get(i) ?? Date.now());
          await producer.publish('demo.leader', { eventId: `e${i}`, i }).then(
            () => void published++,
            () => undefined,
          );
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      await eventually(async () => received.size > 10, 15_000, 50);
      // The node leading the group's consumer: its pulls wait there (the harder case; the stream may move too).
      const leaderName = await consumerLeader(nats.nodes!, consumer.streamName);
      const leader = nats.nodes!.find((n) => n.name === leaderName)!;
      await leader.kill();
      await new Promise((r) => setTimeout(r, 15_000));
      await leader.start();
      await new Promise((r) => setTimeout(r, 3_000));
      producing = false;
      await producerLoop;
      await eventually(async () => received.size >= published, 20_000, 100);
      // Settlement lag: from a message's first publish attempt to its handling.
      const lag = Math.max(...[...received].map(([i, at]) => at - sentAt.get(i)!));
      console.log(`durable.test: consumer leader ${leaderName} killed 15 s; longest publish→handled ${lag} ms over ${published} messages`);
      expect(lag).toBeLessThanOrEqual(10_000);
    } finally {
      producing = false;
      await consumer.close().catch(() => undefined);
      await producer.close().catch(() => undefined);
    }
  }, 90_000);
});
