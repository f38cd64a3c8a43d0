/** The pages over plain HTTP (no browser needed): headers, escaping, 404s, the console's door, listing restore. */
import { startTestApp, type TestApp } from '../../../test/kit';
import { expectLedgerClean } from '../../../test/kit/ledger';
import { listService } from '../../payments/test/payouts-helpers';

const TOKEN = 'pages-admin-token-0123456789';
const HTML = { accept: 'text/html,application/xhtml+xml' };

describe('pages over HTTP', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { ADMIN_TOKEN: TOKEN, SEED_ON_EMPTY: 'true', OPERATOR_CONTACT: 'ops@market.example' } });
  });
  afterAll(async () => {
    await app?.stop();
  });
  afterEach(async () => {
    await expectLedgerClean(app);
  });

  it('the home page: strict headers, live figures, connect snippets and links', async () => {
    const r = await app.api.get('/', HTML);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/text\/html/);
    expect(r.headers.get('content-security-policy')).toBe(
      "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(r.headers.get('x-frame-options')).toBe('DENY');
    expect(r.text).not.toMatch(/<script>|style="/); // nothing inline for the CSP to refuse
    expect(r.text).toMatch(/<span class="n">6<\/span> active listings/);
    expect(r.text).toContain(`${app.config.publicBaseUrl}/mcp`);
    // Issue 37: the stdio config runs the package this server serves; the registry form is "once published".
    expect(r.text).toContain(`&quot;--package=${app.config.publicBaseUrl}/downloads/agent-market-mcp-0.1.0.tgz&quot;`);
    expect(r.text).toContain(`href="${app.config.publicBaseUrl}/downloads/agent-market-mcp-0.1.0.tgz.sha256"`);
    expect(r.text).toMatch(/Once @agent-market\/mcp is published/);
    expect(r.text).toContain('/api/agent/register');
    for (const href of ['/listings', '/llms.txt', '/openapi.json', '/docs']) expect(r.text).toContain(`href="${href}"`);
    const css = await app.api.get('/assets/site.css');
    expect(css.headers.get('content-type')).toMatch(/text\/css/);
  });

  it('every page names a site icon, and /favicon.ico and /favicon.svg answer with an image browsers may cache', async () => {
    for (const page of ['/', '/listings', '/terms', '/no-such-page']) expect((await app.api.get(page, HTML)).text).toContain('<link rel="icon" href="/favicon.svg" type="image/svg+xml"/>');
    for (const path of ['/favicon.ico', '/favicon.svg']) {
      const icon = await fetch(`${app.baseUrl}${path}`);
      expect(icon.status).toBe(200);
      expect(icon.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
      expect(icon.headers.get('cache-control')).toBe('public, max-age=86400');
      expect(await icon.text()).toMatch(/^<svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    }
  });

  it('a seed listing explains its badge and shows its quality as the listing\'s, beside "no sales yet" rather than "0 sales"', async () => {
    const list = await app.api.get('/listings', HTML);
    expect(list.text).toContain('>Seed seller</span>');
    expect(list.text).toMatch(/<span class="badge seed" title="A seed seller is run or vetted by the marketplace operator/);
    expect(list.text).toMatch(/<li title="How clearly the listing says what the buyer provides[^"]*">listing quality \d+\/100<\/li>/);
    expect(list.text).toContain('no sales yet');
    expect(list.text).not.toMatch(/\b0 sales|quality score/);
    const seedListing = (await app.api.get('/api/listings?limit=1')).body.listings[0];
    expect(seedListing.seller.reputation).toMatchObject({ isSeed: true, salesCount: 0 });
    const page = await app.api.get(`/listings/${seedListing.id}`, HTML);
    expect(page.text).toContain('<dt>Listing quality</dt>');
    expect(page.text).toMatch(/It is not a rating of the seller/);
    expect(page.text).toMatch(/A seed seller is run or vetted by the marketplace operator: the sellers a new marketplace starts with/);
    expect(page.text).not.toContain('Quality score');
  });

  it('search terms are escaped; a bad cursor is a page with the hint, not a crash', async () => {
    const r = await app.api.get(`/listings?q=${encodeURIComponent('<script>alert(1)</script>')}`, HTML);
    expect(r.status).toBe(200);
    expect(r.text).not.toContain('<script>alert(1)');
    expect(r.text).toContain('&lt;script>alert(1)&lt;/script>');
    const bad = await app.api.get('/listings?cursor=nonsense', HTML);
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/role="alert"/);
  });

  it('unknown or taken-down listings are a 404 page; an operator can restore a taken-down listing (audited)', async () => {
    const seller = await app.api.register('Pages Seller');
    const listingId = await listService(app, seller.apiKey, 250);
    expect((await app.api.get(`/listings/${listingId}`, HTML)).status).toBe(200);
    expect((await app.api.get('/listings/lst_nope', HTML)).status).toBe(404);

    const admin = (path: string, body: unknown) =>
      fetch(`${app.baseUrl}/api/admin${path}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await admin(`/listings/${listingId}/takedown`, { reason: 'test take-down' })).status).toBe(200);
    const gone = await app.api.get(`/listings/${listingId}`, HTML);
    expect(gone.status).toBe(404);
    expect(gone.text).toContain('Listing not found');

    const restored = await admin(`/listings/${listingId}/restore`, {});
    expect(restored.status).toBe(200);
    expect(((await restored.json()) as any).result.listing).toMatchObject({ id: listingId, status: 'active' });
    expect((await app.api.get(`/listings/${listingId}`, HTML)).status).toBe(200);
    expect((await admin(`/listings/${listingId}/restore`, {})).status).toBe(409); // not taken down
    const log = await fetch(`${app.baseUrl}/api/admin/audit-log?action=listings.restore`, { headers: { authorization: `Bearer ${TOKEN}` } }).then((x) => x.json() as Promise<any>);
    expect(log.result.entries.map((e: any) => e.ok)).toEqual([false, true]);
  });

  it('a browser gets a 404 page, an API client keeps the JSON envelope', async () => {
    const page = await app.api.get('/no-such-page', HTML);
    expect(page.status).toBe(404);
    expect(page.text).toContain('Page not found');
    const api = await app.api.get('/no-such-page');
    expect(api.status).toBe(404);
    expect(api.body.error.code).toBe('not_found');
  });

  it('the console sends strangers to sign-in; the terms page names the operator contact', async () => {
    const r = await fetch(`${app.baseUrl}/admin/payouts`, { redirect: 'manual' });
    expect(r.status).toBe(303);
    expect(r.headers.get('location')).toBe('/admin/login');
    const post = await fetch(`${app.baseUrl}/admin/payouts/csh_x/pay`, { method: 'POST', redirect: 'manual' });
    expect(post.status).toBe(401);
    expect((await app.api.get('/terms', HTML)).text).toContain('ops@market.example');
  });
});

describe('console without ADMIN_TOKEN', () => {
  it('is off, like /api/admin', async () => {
    const app = await startTestApp();
    try {
      const r = await app.api.get('/admin/login', HTML);
      expect(r.status).toBe(404);
      expect(r.text).toContain('The operator console is off');
    } finally {
      await app.stop();
    }
  });
});
