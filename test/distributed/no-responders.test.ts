/**
 * A killed replica is noticed in milliseconds, not after the heartbeat timeout: every request to a node
 * carries a reply subject, so the NATS server answers "no responders" as soon as the node's subscription is
 * gone (packages/broker/nats-transporter.ts). Here the heartbeat timeout is 60 s, so only that can explain a
 * fast answer: a call waiting on a node killed -9 is rejected within a second of the next call to it.
 * On a private nats-server (no auth; the transporter's own checks still run).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { ServiceBroker } from 'moleculer';
import { AuthNatsTransporter } from '../../packages/broker/nats-transporter';
import { LEDGER } from '../../packages/contracts/ledger';
import { natsServerAvailable, startPrivateNats, type PrivateNats } from '../../packages/cluster/nats-server';

const describeIf = natsServerAvailable() ? describe : describe.skip;

describeIf('a killed node is taken as gone when NATS says no one listens', () => {
  let nats: PrivateNats;
  let child: ChildProcess;
  let caller: ServiceBroker;

  beforeAll(async () => {
    nats = await startPrivateNats();
    child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'fixtures/slow-ledger-node.ts'), nats.url], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
      child.once('exit', (code) => reject(new Error(`slow node exited ${code}`)));
    });
    caller = new ServiceBroker({
      nodeID: `gateway.caller-${process.pid}`,
      namespace: 'noresp',
      logger: false,
      heartbeatInterval: 5,
      heartbeatTimeout: 60,
      requestTimeout: 30_000,
      transporter: new AuthNatsTransporter({ url: nats.url, user: 'gateway', pass: 'x', namespace: 'noresp', precheck: false }) as never,
    });
    await caller.start();
    await caller.waitForServices(['ledger'], 30_000);
  }, 60_000);

  afterAll(async () => {
    child?.kill('SIGKILL');
    await caller?.stop();
    await nats?.dispose();
  });

  it('rejects the calls held by a node killed -9 at once, not after the heartbeat timeout', async () => {
    const waiting = caller.call(LEDGER.balance, { agentId: 'agt_x' }).then(
      () => 'answered',
      (err: { type?: string }) => err.type,
    );
    await new Promise((r) => setTimeout(r, 500));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    await new Promise((r) => setTimeout(r, 200));
    const from = Date.now();
    // The next call to that node meets "no responders": the node is gone, both calls are rejected.
    const next = await caller.call(LEDGER.balance, { agentId: 'agt_y' }).then(
      () => 'answered',
      (err: { type?: string }) => err.type,
    );
    const first = await waiting;
    const tookMs = Date.now() - from;
    expect({ first, next, fast: tookMs < 1_000 }).toEqual({ first: 'REQUEST_REJECTED', next: expect.stringMatching(/REQUEST_REJECTED|SERVICE_NOT_AVAILABLE/), fast: true });
    // New calls no longer go to it.
    await expect(caller.call(LEDGER.balance, { agentId: 'agt_z' })).rejects.toMatchObject({ type: 'SERVICE_NOT_AVAILABLE' });
  }, 60_000);
});
