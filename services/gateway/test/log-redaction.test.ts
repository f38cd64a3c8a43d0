/**
 * Issue #23, "owner and approval tokens are written to the access log in clear": every page whose
 * path carries a secret (owner link, approval link, checkout session) is requested, and no log line
 * (access, warn, error) contains the secret; a 5xx on such a page is logged with the path redacted.
 * A last check lists the app's routes: any route with a parameter in its path is either known to be
 * public (ids) or covered by the redaction.
 */
import type { Server } from 'node:http';
import { startTestApp, type TestApp } from '../../../test/kit';
import { openSandboxCheckout, submitSandboxForm } from '../../../test/kit/checkout';
import { creditGas } from '../../../test/kit/ledger';
import { newAgent, newListing } from '../../escrow/test/helpers';
import { SECRET_ROUTE_PREFIXES, redactPath } from '../redact';

describe('secrets in paths are redacted in the logs (issue #23)', () => {
  let app: TestApp;
  const lines: unknown[][] = [];
  beforeAll(async () => {
    app = await startTestApp();
    const loggers = new Set([app.broker.logger, (app.broker.getLocalService('gateway') as any).logger]);
    for (const logger of loggers) {
      for (const level of ['info', 'warn', 'error', 'debug'] as const) {
        const orig = logger[level].bind(logger);
        jest.spyOn(logger, level).mockImplementation((...args: unknown[]) => {
          lines.push(args);
          return orig(...args);
        });
      }
    }
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await app?.stop();
  });
  const logged = () => JSON.stringify(lines, (_k, v) => (v instanceof Error ? `${v.message} ${v.stack}` : v));

  it('owner, approval and checkout paths never appear in clear in any log line', async () => {
    const buyer = await newAgent(app, 'Buyer');
    const seller = await newAgent(app, 'Seller');
    const checkout = await app.api.ok('buy_gas', { packId: 'starter' }, buyer.apiKey);
    const pageUrl = `${app.baseUrl}${new URL(checkout.checkoutUrl).pathname}`;
    const form = await openSandboxCheckout(pageUrl);
    const approved = await submitSandboxForm(form, 'approve', { limitsForm: '1', approvalAboveGas: '10' });
    const ownerToken = /\/owner\/([A-Za-z0-9_-]{20,})/.exec(approved.html)![1];
    await creditGas(app, buyer.id, 100);
    const listing = await newListing(app, seller, { priceGas: 50 });
    const p = (await app.api.ok('purchase_service', { listingId: listing.id }, buyer.apiKey)).purchase;
    const approvalToken = new URL(p.approvalUrl).pathname.split('/')[2];
    expect(approvalToken.length).toBeGreaterThan(20);

    const secrets = [ownerToken, approvalToken, checkout.sessionId];
    const cookie = approved.cookie;
    const get = (path: string) => fetch(`${app.baseUrl}${path}`, { headers: { cookie } });
    const post = (path: string) => fetch(`${app.baseUrl}${path}`, { method: 'POST', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: 'csrf=x' });
    await get(`/owner/${ownerToken}`);
    await post(`/owner/${ownerToken}/limits`);
    await post(`/owner/${ownerToken}/revoke`);
    await get(`/approve/${approvalToken}`);
    await post(`/approve/${approvalToken}/approve`);
    await post(`/approve/${approvalToken}/decline`);
    await get(`/checkout/sandbox/${checkout.sessionId}`);
    await post(`/checkout/sandbox/${checkout.sessionId}/approve`);
    await post(`/checkout/sandbox/${checkout.sessionId}/decline`);
    await get(`/checkout/${checkout.sessionId}`);
    await post(`/checkout/${checkout.sessionId}/continue`);
    const unknown = await get(`/owner/${ownerToken}/no/such/page`);
    expect(((await unknown.json()) as any).error.message).not.toContain(ownerToken);
    await new Promise((r) => setTimeout(r, 50));

    const text = logged();
    expect(text).toContain('/owner/[redacted]');
    expect(text).toContain('/approve/[redacted]/approve');
    expect(text).toContain('/checkout/sandbox/[redacted]');
    for (const secret of secrets) expect(text).not.toContain(secret);
  });

  it('a 5xx on the owner page is logged at error, with the token redacted', async () => {
    const escrow = app.broker.getLocalService('escrow') as any;
    await escrow.db.query('ALTER TABLE escrow.owner_links RENAME TO owner_links_gone');
    try {
      const token = 'Z'.repeat(32);
      const r = await fetch(`${app.baseUrl}/owner/${token}`);
      expect(r.status).toBe(500);
      await new Promise((res) => setTimeout(res, 50));
      const errors = lines.filter((l) => (l[0] as any)?.status === 500 && String((l[0] as any)?.path ?? '').startsWith('/owner/'));
      expect(errors.length).toBeGreaterThan(0);
      expect((errors[0][0] as any).path).toBe('/owner/[redacted]');
      expect(logged()).not.toContain(token);
    } finally {
      await escrow.db.query('ALTER TABLE escrow.owner_links_gone RENAME TO owner_links');
    }
  });

  it('every route with a parameter in its path is either redacted or carries only a public id', () => {
    const server = (app.broker.getLocalService('gateway') as any).server as Server;
    const express = server.listeners('request')[0] as any;
    const routes: string[] = express.router.stack.filter((l: any) => l.route).map((l: any) => String(l.route.path));
    const withParams = [...new Set(routes.filter((r) => r.includes(':')))];
    // Public ids (listings, admin objects behind the operator's token) and public file names (downloads): not secrets.
    const publicId = /^\/(api\/)?admin\/|^\/listings\/:id$|^\/downloads\/:file$/;
    const secret = withParams.filter((r) => !publicId.test(r));
    expect(secret.length).toBeGreaterThanOrEqual(8);
    for (const r of secret) {
      expect(SECRET_ROUTE_PREFIXES.some((p) => r.startsWith(p))).toBe(true);
      const sample = r.replace(/:[A-Za-z]+/g, 'SECRETVALUE');
      expect(redactPath(sample)).not.toContain('SECRETVALUE');
    }
  });
});
