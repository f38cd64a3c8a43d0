/**
 * The money plumbing on the real engines: an outbox relayed over NATS JetStream to a consumer that
 * was offline when the events were written, a handler that fails once, and exactly-once effect.
 */
import type { ServiceSchema } from 'moleculer';
import { createBroker } from '../../packages/broker';
import { loadConfig } from '../../packages/config';
import { dbMixin } from '../../packages/db/mixin';
import { claimInbox, enqueueEvent, outboxTablesSql, OutboxRelay, type OutboxEvent } from '../../packages/outbox';
import { base62 } from '../../packages/ids';
import { createTestDatabase, describeDistributed, eventually, TEST_NATS_URL, type TestDatabase } from '../kit';

function producer(): ServiceSchema {
  return {
    name: 'producer',
    mixins: [dbMixin('demo_out', [{ version: 1, name: 'outbox', sql: outboxTablesSql('demo_out') }])],
    actions: {
      emit: {
        params: { n: 'number' },
        async handler(this: any, ctx: any) {
          await this.db.transaction(async (tx: any) => {
            for (let i = 0; i < ctx.params.n; i++) await enqueueEvent(tx, 'demo_out', 'demo.happened', { i });
          });
          await this.relay.kick();
        },
      },
    },
    async started(this: any) {
      this.relay = new OutboxRelay(this.broker, this.db, { intervalMs: 200 });
      this.relay.start();
    },
    async stopped(this: any) {
      await this.relay.stop();
    },
  };
}

const failOnce = new Set<number>([3]);

function consumer(): ServiceSchema {
  return {
    name: 'consumer',
    mixins: [
      dbMixin('demo_in', [
        { version: 1, name: 'inbox', sql: `${outboxTablesSql('demo_in')} CREATE TABLE demo_in.seen (i integer PRIMARY KEY, times integer NOT NULL);` },
      ]),
    ],
    channels: {
      'demo.happened': {
        group: 'consumer',
        async handler(this: any, event: OutboxEvent<{ i: number }>) {
          if (failOnce.delete(event.data.i)) throw new Error('transient failure');
          await this.db.transaction(async (tx: any) => {
            if (!(await claimInbox(tx, 'demo_in', event))) return;
            await tx.query(
              'INSERT INTO demo_in.seen (i, times) VALUES ($1, 1) ON CONFLICT (i) DO UPDATE SET times = demo_in.seen.times + 1',
              [event.data.i],
            );
          });
        },
      },
    },
  } as ServiceSchema;
}

describeDistributed('outbox → JetStream → idempotent consumer', () => {
  let tdb: TestDatabase;
  beforeAll(async () => {
    tdb = await createTestDatabase();
  });
  afterAll(async () => tdb?.drop());

  it('delivers every event exactly once in effect, even to a consumer that was offline and one that failed', async () => {
    const namespace = `t${base62(8)}`;
    const config = (nodeId: string) =>
      loadConfig({ TRANSPORTER: TEST_NATS_URL!, DATABASE_URL: tdb.url, NAMESPACE: namespace, NODE_ID: nodeId, LOG_LEVEL: 'fatal', NODE_ENV: 'test' });

    // The consumer subscribes once (creating its durable consumer), then goes away.
    let c = createBroker({ config: config('c1'), services: [consumer()] });
    await c.start();
    await c.stop();

    const p = createBroker({ config: config('p1'), services: [producer()] });
    await p.start();
    await p.call('producer.emit', { n: 20 });
    const svc = p.getLocalService('producer') as any;
    const pending = await svc.db.query('SELECT count(*)::int AS n FROM demo_out.outbox WHERE published_at IS NULL');
    expect(pending.rows[0].n).toBe(0);

    c = createBroker({ config: config('c2'), services: [consumer()] });
    await c.start();
    const cs = c.getLocalService('consumer') as any;
    const rows = await eventually(async () => {
      const r = await cs.db.query('SELECT i, times FROM demo_in.seen ORDER BY i');
      return r.rows.length === 20 ? r.rows : null;
    }, 30_000, 100);
    expect(rows.every((r: any) => r.times === 1)).toBe(true);

    await p.stop();
    await c.stop();
  }, 60_000);
});
