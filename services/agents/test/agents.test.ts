/**
 * The agents service alone, driven through broker.call (validation, hooks and middlewares run), with
 * its durable events received by a small consumer on the same broker through the real channels layer.
 * Agents is an identity service: it calls no other service.
 */
import type { ServiceBroker } from 'moleculer';
import type { AnyServiceSchema } from '../../../packages/runtime';
import { createBroker } from '../../../packages/broker';
import { loadConfig } from '../../../packages/config';
import { base62, sha256Hex } from '../../../packages/ids';
import type { OutboxEvent } from '../../../packages/outbox';
import agents from '../agents.service';
import { AGENTS, AGENTS_TOPICS, type AgentRegistered, type AgentSeedChanged } from '../../../packages/contracts/agents';

const received: Array<OutboxEvent<AgentRegistered | AgentSeedChanged>> = [];

const Listener: AnyServiceSchema = {
  name: 'agents-listener',
  channels: {
    [AGENTS_TOPICS.registered]: { group: 'agents-test', handler: (e: OutboxEvent<AgentRegistered>) => void received.push(e) },
    [AGENTS_TOPICS.seedChanged]: { group: 'agents-test', handler: (e: OutboxEvent<AgentSeedChanged>) => void received.push(e) },
  },
};

async function until<T>(fn: () => T | undefined, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('agents service', () => {
  let broker: ServiceBroker;
  const call = <T = any>(action: string, params: Record<string, unknown> = {}, meta: Record<string, unknown> = {}) =>
    broker.call(action, params, { meta }) as Promise<T>;

  beforeAll(async () => {
    const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: 'memory://', LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'error', SWEEP_INTERVAL_MS: '0' });
    broker = createBroker({ config, services: [agents, Listener], brokerOptions: { nodeID: `agents-test-${base62(8)}` } });
    await broker.start();
  });
  afterAll(async () => {
    await broker?.stop();
  });

  it('registers an agent: the key is shown once and only its hash authenticates', async () => {
    const r = await call<{ apiKey: string; agent: any }>(AGENTS.register, { provider: 'claude_code', displayName: '  Tester  ', label: 'ci' });
    expect(r.apiKey).toMatch(/^rk_live_[0-9A-Za-z]{40}$/);
    expect(r.agent).toMatchObject({ id: expect.stringMatching(/^agt_/), provider: 'claude_code', displayName: 'Tester', label: 'ci', isSeed: false, gasBalance: 0 });
    expect(await call(AGENTS.authenticate, { apiKeyHash: sha256Hex(r.apiKey) })).toMatchObject({ id: r.agent.id });
    expect(await call(AGENTS.authenticate, { apiKeyHash: sha256Hex(`${r.apiKey}x`) })).toBeNull();
    const event = await until(() => received.find((e) => e.topic === AGENTS_TOPICS.registered && (e.data as AgentRegistered).agentId === r.agent.id));
    expect(event.data).toMatchObject({ displayName: 'Tester', isSeed: false, referredBy: null });
  });

  it('a referral must name a registered agent; isSeed is honoured only for internal callers', async () => {
    const referrer = (await call<{ agent: any }>(AGENTS.register, { provider: 'other', displayName: 'Referrer' })).agent;
    const referred = (await call<{ agent: any }>(AGENTS.register, { provider: 'other', displayName: 'Referred', referredBy: referrer.id })).agent;
    expect(await call(AGENTS.get, { agentId: referred.id })).toMatchObject({ referredBy: referrer.id });
    await expect(call(AGENTS.register, { provider: 'other', displayName: 'Nobody sent me', referredBy: 'agt_doesNotExist' })).rejects.toMatchObject({
      type: 'invalid_arguments',
    });
    expect((await call<{ agent: any }>(AGENTS.register, { provider: 'other', displayName: 'Self-made seed', isSeed: true })).agent.isSeed).toBe(false);
    expect((await call<{ agent: any }>(AGENTS.register, { provider: 'other', displayName: 'Seed', isSeed: true }, { internal: true })).agent.isSeed).toBe(true);
  });

  it('whoami is identity only (the gateway adds balance and reputation) and needs an agent', async () => {
    const me = (await call<{ agent: any }>(AGENTS.register, { provider: 'other', displayName: 'Me' })).agent;
    const who = await call<{ agent: any }>(AGENTS.whoami, {}, { agent: { id: me.id, displayName: 'Me', provider: 'other' } });
    expect(who.agent).toEqual({ id: me.id, provider: 'other', displayName: 'Me', label: null, referredBy: null, isSeed: false, createdAt: me.createdAt });
    await expect(call(AGENTS.whoami, {})).rejects.toMatchObject({ type: 'unauthorized' });
  });

  it('counts registrations and marks seed sellers with an event', async () => {
    const before = await call<{ total: number; since: number }>(AGENTS.count, { since: new Date(Date.now() + 60_000).toISOString() });
    expect(before.since).toBe(0);
    expect(before.total).toBeGreaterThanOrEqual(5);
    const a = (await call<{ agent: any }>(AGENTS.register, { provider: 'other', displayName: 'Becomes seed' })).agent;
    expect(await call(AGENTS.setSeed, { agentId: a.id, isSeed: true })).toMatchObject({ id: a.id, isSeed: true });
    await until(() => received.find((e) => e.topic === AGENTS_TOPICS.seedChanged && (e.data as AgentSeedChanged).agentId === a.id));
    await expect(call(AGENTS.setSeed, { agentId: 'agt_nobody', isSeed: true })).rejects.toMatchObject({ type: 'not_found' });
    await expect(call(AGENTS.get, { agentId: 'agt_nobody' })).rejects.toMatchObject({ type: 'unauthorized' });
  });
});
