/**
 * Recovery from a stale key (issue #15): with an invalid or revoked key configured, the tools that
 * need no key still work over the tool router and /mcp, with a warning that the key was ignored and
 * how to replace it; the MCP hint names no HTTP route. Tools that need a key still answer 401.
 */
import { startTestApp, type TestApp } from '../../../test/kit';
import { connect, httpTransport, callOk, callErr } from './mcp-helpers';

const STALE = `rk_live_${'S'.repeat(40)}`;
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.stop();
});

function expectIgnoredWarning(result: any, door: 'http' | 'mcp'): void {
  expect(result.warning).toMatchObject({ code: 'api_key_ignored' });
  expect(result.warning.message).toMatch(/not valid/);
  expect(result.warning.hint).toMatch(/register tool/);
  if (door === 'mcp') {
    expect(result.warning.hint).toMatch(/MCP server's configuration/);
    expect(result.warning.hint).not.toMatch(/\/api\//);
  }
}

describe('a stale key over the tool router', () => {
  test('register, search_services, ask_help and whoami work, each with a warning; wallet still answers 401', async () => {
    const reg = await app.api.call('register', { provider: 'claude_code', displayName: 'Stale Key Agent' }, STALE);
    expect(reg.status).toBe(200);
    expect(reg.body.result.apiKey).toMatch(/^rk_live_/);
    expectIgnoredWarning(reg.body.result, 'http');

    const search = await app.api.call('search_services', { q: 'tests' }, STALE);
    expect(search.status).toBe(200);
    expect(Array.isArray(search.body.result.listings)).toBe(true);
    expectIgnoredWarning(search.body.result, 'http');

    const help = await app.api.call('ask_help', { question: 'How do I cash out?', context: { requestId: 'req_x' } }, STALE);
    expect(help.status).toBe(200);
    expect(help.body.result.known).toBe(true);
    expect(help.body.result.answer).toMatch(/request_cashout/);
    expectIgnoredWarning(help.body.result, 'http');

    const me = await app.api.call('whoami', {}, STALE);
    expect(me.status).toBe(200);
    expect(me.body.result).toMatchObject({ registered: false, agent: null });
    expectIgnoredWarning(me.body.result, 'http');

    const wallet = await app.api.call('wallet', {}, STALE);
    expect(wallet.status).toBe(401);
    expect(wallet.body.error!.code).toBe('unauthorized');
    expect(wallet.body.error!.hint).toMatch(/register tool/);

    // The new key from that register works, and carries no warning.
    const fresh = await app.api.call('whoami', {}, reg.body.result.apiKey);
    expect(fresh.body.result.agent.displayName).toBe('Stale Key Agent');
    expect(fresh.body.result.warning).toBeUndefined();
  });

  test('without any key, whoami and ask_help still ask for one (and name the register tool)', async () => {
    const me = await app.api.call('whoami', {});
    expect(me.status).toBe(401);
    expect(me.body.error!.hint).toMatch(/register tool/);
    const help = await app.api.call('ask_help', { question: 'How do I cash out?' });
    expect(help.status).toBe(401);
  });
});

describe('a stale key over /mcp', () => {
  test('register, search_services, ask_help and whoami work with a warning whose hint is for MCP', async () => {
    const client = await connect(httpTransport(app.baseUrl, { apiKey: STALE }));
    const reg = await callOk(client, 'register', { provider: 'cursor', displayName: 'Stale MCP Agent' });
    expect(reg.apiKey).toMatch(/^rk_live_/);
    expectIgnoredWarning(reg, 'mcp');
    expectIgnoredWarning(await callOk(client, 'search_services', {}), 'mcp');
    // The three questions of issue #15, as an agent over MCP asks them.
    const help = await callOk(client, 'ask_help', { question: 'What happens to my gas when I buy a service?' });
    expect(help.answer).toMatch(/held in escrow/);
    expectIgnoredWarning(help, 'mcp');
    expect((await callOk(client, 'ask_help', { question: 'How much does the platform take when I sell something?' })).answer).toMatch(/10%/);
    const late = await callOk(client, 'ask_help', { question: 'How long until the seller is paid if I forget to confirm?' });
    expect(late.answer).toMatch(/auto-release/);
    expect(late.answer).toMatch(/3 days/);
    const me = await callOk(client, 'whoami');
    expect(me).toMatchObject({ registered: false, agent: null });
    expectIgnoredWarning(me, 'mcp');

    const env = await callErr(client, 'wallet');
    expect(env.error.code).toBe('unauthorized');
    expect(env.error.hint).toMatch(/MCP server's configuration/);
    expect(env.error.hint).not.toMatch(/\/api\//);
    await client.close();
  });
});
