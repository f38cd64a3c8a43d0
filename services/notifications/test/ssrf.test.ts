/**
 * SSRF refusals: https only, and no private, loopback, link-local, CGNAT, multicast or unspecified
 * target, checked on the resolved addresses (so a public-looking name that resolves inside is
 * refused too). No request is ever sent to these addresses: they are refused before connecting.
 */
import { startTestApp, type TestApp } from '../../../test/kit';
import { checkWebhookUrl, isPrivateAddress, resolveWebhookTarget, WebhookTargetError } from '../ssrf';
import { newAgent } from '../../escrow/test/helpers';

describe('webhook targets', () => {
  it.each([
    '127.0.0.1', '127.9.9.9', '10.0.0.1', '172.16.5.4', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1',
    '0.0.0.0', '224.0.0.251', '255.255.255.255', '::', '::1', 'fe80::1', 'fd00::1', 'fc00::2', 'ff02::1',
    '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:169.254.169.254', '64:ff9b::a00:1',
  ])('%s is refused', (ip) => {
    expect(isPrivateAddress(ip)).toBe(true);
  });

  // Issue #23: IPv4-compatible (::/96), IPv4-translated (::ffff:0:0:0/96), NAT64 (64:ff9b::/96, 64:ff9b:1::/48),
  // 6to4 and Teredo forms, and IPv4-mapped forms even of a public IPv4 (refused whole).
  it.each(['::7f00:1', '::127.0.0.1', '::a9fe:a9fe', '::ffff:0:7f00:1', '::ffff:0:808:808', '::808:808', '64:ff9b::808:808', '64:ff9b:1::1',
    '2002:7f00:1::1', '2001:0:4136:e378::1', '::ffff:8.8.8.8', '2001:db8::1', '100::1', '127.1'])('%s is refused (issue #23)', (ip) => {
    expect(isPrivateAddress(ip)).toBe(true);
  });

  it.each(['93.184.216.34', '1.1.1.1', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e'])('%s is public', (ip) => {
    expect(isPrivateAddress(ip)).toBe(false);
  });

  it('needs https unless private targets are allowed, and no credentials', () => {
    expect(() => checkWebhookUrl('http://example.com/hook', false)).toThrow(WebhookTargetError);
    expect(() => checkWebhookUrl('ftp://example.com/hook', true)).toThrow(/https or http/);
    expect(() => checkWebhookUrl('https://user:pw@example.com/hook', false)).toThrow(/user name or password/);
    expect(() => checkWebhookUrl('not a url', false)).toThrow(/absolute URL/);
    expect(checkWebhookUrl('http://127.0.0.1:9/hook', true).hostname).toBe('127.0.0.1');
  });

  it('checks every resolved address, so DNS pointing inside (rebinding) is refused', async () => {
    const rebinding = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.7', family: 4 },
    ];
    await expect(resolveWebhookTarget('https://hooks.example.com/x', false, rebinding)).rejects.toMatchObject({ reason: 'private_address' });
    const inside = async () => [{ address: '::ffff:169.254.169.254', family: 6 }];
    await expect(resolveWebhookTarget('https://metadata.example.com/', false, inside)).rejects.toMatchObject({ reason: 'private_address' });
    const nxdomain = async () => {
      throw Object.assign(new Error('nope'), { code: 'ENOTFOUND' });
    };
    await expect(resolveWebhookTarget('https://nowhere.example/', false, nxdomain)).rejects.toMatchObject({ reason: 'dns' });
    // The address returned is the one checked: the POST connects to it, not to a fresh lookup.
    const pub = async () => [{ address: '93.184.216.34', family: 4 }];
    await expect(resolveWebhookTarget('https://hooks.example.com/x', false, pub)).resolves.toMatchObject({ address: '93.184.216.34', family: 4 });
    // WEBHOOK_ALLOW_PRIVATE=true: loopback is fine.
    await expect(resolveWebhookTarget('http://localhost:9/x', true, async () => [{ address: '127.0.0.1', family: 4 }])).resolves.toMatchObject({
      address: '127.0.0.1',
    });
  });
});

describe('set_webhook without WEBHOOK_ALLOW_PRIVATE', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => app?.stop());

  it.each([
    ['http://example.com/hook', 'scheme'],
    ['https://127.0.0.1/hook', 'private_address'],
    ['https://localhost:8443/hook', 'private_address'],
    ['https://[::1]/hook', 'private_address'],
    ['https://169.254.169.254/latest/meta-data', 'private_address'],
    ['https://10.1.2.3/hook', 'private_address'],
    ['https://[::ffff:192.168.0.1]/hook', 'private_address'],
    ['https://0.0.0.0/hook', 'private_address'],
    ['https://[::127.0.0.1]/hook', 'private_address'],
    ['https://[::7f00:1]/hook', 'private_address'],
    ['https://[::a9fe:a9fe]/hook', 'private_address'],
    ['https://[::ffff:0:7f00:1]/hook', 'private_address'],
  ])('refuses %s (%s)', async (url, reason) => {
    const agent = await newAgent(app, 'Agent');
    const r = await app.api.call('set_webhook', { url }, agent.apiKey);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'invalid_arguments', details: { field: 'url', reason } });
    expect(r.body.error!.hint).toMatch(/public https/);
    const list = await app.api.ok('list_webhook_deliveries', {}, agent.apiKey);
    expect(list.webhooks).toEqual([]);
  });

  it('does not say what a name resolves to (issue #23)', async () => {
    const agent = await newAgent(app, 'Agent');
    const r = await app.api.call('set_webhook', { url: 'https://localhost/hook' }, agent.apiKey);
    expect(r.status).toBe(400);
    expect(r.body.error!.message).toMatch(/resolves to a private, loopback, link-local or reserved address/);
    expect(JSON.stringify(r.body)).not.toMatch(/127\.0\.0\.1|::1/);
  });
});
