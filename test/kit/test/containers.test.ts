/** The testkit's own containers: a NATS that a fault test can cut off and bring back with its JetStream data. */
import { connect, RetentionPolicy, StorageType } from 'nats';
import { describeWithDocker, eventually, freePort, startNatsContainer, type NatsContainer } from '..';

describeWithDocker('testkit containers', () => {
  let nats: NatsContainer;

  beforeAll(async () => {
    nats = await startNatsContainer({ hostPort: await freePort() });
  }, 180_000);
  afterAll(async () => {
    await nats?.stop();
  });

  it('cuts NATS off (clients lose it) and restores it on the same URL with its JetStream messages', async () => {
    const nc = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 200 });
    try {
      const jsm = await nc.jetstreamManager();
      await jsm.streams.add({ name: 'CUT', subjects: ['cut.>'], storage: StorageType.File, retention: RetentionPolicy.Limits });
      await nc.jetstream().publish('cut.before', new TextEncoder().encode('kept'));

      const statuses: string[] = [];
      void (async () => {
        for await (const s of nc.status()) statuses.push(s.type);
      })();
      await nats.cut();
      await eventually(async () => statuses.includes('disconnect'), 60_000, 50);
      await expect(nc.jetstream().publish('cut.during', new TextEncoder().encode('x'), { timeout: 500 })).rejects.toThrow();

      await nats.restore();
      await eventually(async () => statuses.includes('reconnect'), 120_000, 50);
      const info = await (await nc.jetstreamManager()).streams.info('CUT');
      expect(info.state.messages).toBe(1);
    } finally {
      await nc.close();
    }
    // Stopping and starting a container takes long on a loaded 2-core machine (CI runs the fault suite beside it).
  }, 300_000);
});
