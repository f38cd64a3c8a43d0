/**
 * Publishing never blocks a write (issue #38, ADR 0036): with a transport that does not answer (JetStream
 * stuck, or without a quorum), a state change and its outbox rows commit and return at once; the rows stay
 * unpublished, and a relay pass publishes them, in order, once the transport answers again. Embedded
 * (an inline transport) still publishes before the write returns.
 */
import type { ServiceBroker } from 'moleculer';
import { migrate, openDb, type Db } from '../../db';
import { OutboxRelay, outboxTablesSql, updateWithEvents } from '..';

type Send = (topic: string, event: { data: { n: number } }) => Promise<void>;

function fakeBroker(inline: boolean, send: { fn: Send }): ServiceBroker {
  return { sendToChannel: (topic: string, event: { data: { n: number } }) => send.fn(topic, event), durableEvents: { inline } } as unknown as ServiceBroker;
}

describe('the outbox publishes off the write path', () => {
  let db: Db;
  beforeAll(async () => {
    db = openDb({ databaseUrl: null, dataDir: 'memory://' }, 'ob');
    await migrate(db, [{ version: 1, name: 'things', sql: `${outboxTablesSql('ob')} CREATE TABLE ob.things (id int PRIMARY KEY, n int NOT NULL);` }]);
    await db.query('INSERT INTO ob.things VALUES (1, 0)');
  }, 60_000);
  afterAll(async () => db?.close());

  it('returns while the transport hangs, and the relay publishes the rows in order once it answers', async () => {
    const never = new Promise<void>(() => undefined);
    const send = { fn: (() => never) as Send };
    const relay = new OutboxRelay(fakeBroker(false, send), db, { intervalMs: 0, leaseSeconds: 1 });
    const started = Date.now();
    for (let n = 1; n <= 5; n++) {
      const row = await updateWithEvents<{ n: number }>(db, relay, 'UPDATE ob.things SET n = $1 WHERE id = 1 RETURNING n', [n], [['thing.changed', { n }]]);
      expect(row?.n).toBe(n);
    }
    expect(Date.now() - started).toBeLessThan(2_000);
    const pending = await db.query<{ c: string }>('SELECT count(*) AS c FROM ob.outbox WHERE published_at IS NULL');
    expect(Number(pending.rows[0].c)).toBe(5);

    // JetStream answers again: a relay pass (after the writer's short lease) publishes everything, in order.
    const seen: number[] = [];
    send.fn = async (_topic, event) => void seen.push(event.data.n);
    await new Promise((r) => setTimeout(r, 2_100));
    await relay.kick();
    expect(seen).toEqual([1, 2, 3, 4, 5]);
    expect(await relay.oldestUnpublishedSeconds()).toBe(0);
    await relay.stop();
  }, 30_000);

  it('embedded (an inline transport): the consumers have run when the write returns', async () => {
    const seen: number[] = [];
    const relay = new OutboxRelay(fakeBroker(true, { fn: async (_t, e) => void seen.push(e.data.n) }), db, { intervalMs: 0 });
    await updateWithEvents(db, relay, 'UPDATE ob.things SET n = $1 WHERE id = 1 RETURNING n', [42], [['thing.changed', { n: 42 }]]);
    expect(seen).toEqual([42]);
    await relay.stop();
  });
});
