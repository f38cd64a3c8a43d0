/**
 * The public pages (no key): /, /listings, /listings/:id, /terms, and the two assets. Reads go
 * through the same actions as the JSON API — search through the tool dispatcher (validation and
 * rate limit included), figures through listings.stats and escrow.liquidity.
 */
import type { Express, NextFunction, Request, Response } from 'express';
import type { GatewayDeps } from '../deps';
import { dispatchHttpCall } from '../routes/http-call';
import { SITE_CSS, SITE_ICON_SVG, SITE_JS } from './assets';
import { ASSET_CSS, ASSET_JS, ICON_PATHS } from './format';
import { HomePage, ListingPage, ListingsPage, TermsPage, type HomeFigures, type ListingView, type ListingsQuery } from './public-pages';
import { MessagePage, sendPage } from './render';
import { LISTINGS } from '../../../packages/contracts/listings';
import { ESCROW } from '../../../packages/contracts/escrow';

const one = (v: unknown): string => (typeof (Array.isArray(v) ? v[0] : v) === 'string' ? String(Array.isArray(v) ? v[0] : v).slice(0, 500) : '');

export function registerPublicPages(app: Express, deps: GatewayDeps): void {
  const { broker, config } = deps;
  const baseUrl = config.publicBaseUrl;
  const meta = (req: Request) => ({ meta: { requestId: req.requestId } });

  app.get(ASSET_CSS, (_req, res) => {
    res.set({ 'content-type': 'text/css; charset=utf-8', 'cache-control': 'public, max-age=3600' }).send(SITE_CSS);
  });
  app.get(ASSET_JS, (_req, res) => {
    res.set({ 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=3600' }).send(SITE_JS);
  });
  for (const path of ICON_PATHS) {
    app.get(path, (_req, res) => {
      res.set({ 'content-type': 'image/svg+xml', 'cache-control': 'public, max-age=86400' }).send(SITE_ICON_SVG);
    });
  }

  app.get('/', async (req, res) => {
    // A service that is down costs its figure, not the page.
    const [stats, liquidity] = await Promise.all([
      broker.call<{ total: number; byCategory: Record<string, number> }, Record<string, never>>(LISTINGS.stats, {}, meta(req)).catch(() => null),
      broker.call<{ purchases7d: number; registrations: number }, Record<string, never>>(ESCROW.liquidity, {}, meta(req)).catch(() => null),
    ]);
    const figures: HomeFigures = {
      byCategory: stats?.byCategory ?? null,
      totalListings: stats?.total ?? null,
      purchases7d: liquidity?.purchases7d ?? null,
      registrations: liquidity?.registrations ?? null,
    };
    sendPage(res, 200, <HomePage baseUrl={baseUrl} figures={figures} />);
  });

  app.get('/listings', async (req, res) => {
    const query: ListingsQuery = { q: one(req.query.q), category: one(req.query.category), sort: one(req.query.sort), cursor: one(req.query.cursor) };
    const args: Record<string, unknown> = { limit: 20 };
    for (const k of ['q', 'category', 'sort', 'cursor'] as const) if (query[k]) args[k] = query[k];
    const outcome = await dispatchHttpCall(deps.dispatcher, req, res, { tool: 'search_services', args });
    if (outcome.body.ok) {
      const r = outcome.body.result as { listings: ListingView[]; nextCursor: string | null };
      sendPage(res, 200, <ListingsPage query={query} listings={r.listings} nextCursor={r.nextCursor} error={null} />);
    } else {
      const e = outcome.body.error;
      if (outcome.headers['retry-after']) res.set('retry-after', outcome.headers['retry-after']);
      sendPage(res, outcome.status, <ListingsPage query={query} listings={[]} nextCursor={null} error={`${e.message}${e.hint ? ` ${e.hint}` : ''}`} />);
    }
  });

  app.get('/listings/:id', async (req, res) => {
    const listingId = String(req.params.id).slice(0, 100);
    // Not even shaped like an id (NUL, spaces, …): no such listing, without asking the database.
    const [listing, terms] = !/^[A-Za-z0-9_-]+$/.test(listingId) ? [null, null] : await Promise.all([
      broker.call<ListingView, { listingId: string }>(LISTINGS.get, { listingId }, meta(req)).catch((err) => (err?.code === 404 || err?.type === 'not_found' ? null : Promise.reject(err))),
      broker.call<{ deliverableSchema: unknown }, { listingId: string }>(LISTINGS.getForPurchase, { listingId }, meta(req)).catch(() => null),
    ]).catch(() => [undefined, null] as const);
    if (listing === undefined) {
      sendPage(res, 503, <MessagePage title="Listings are unavailable" message="The listings service did not answer. Try again in a minute." />);
      return;
    }
    // Taken down, paused or unknown: the public page does not exist (search does not show them either).
    if (!listing || listing.status !== 'active') {
      sendPage(
        res,
        404,
        <MessagePage title="Listing not found" message="There is no active listing with this address. It may have been paused or taken down.">
          <p>
            <a href="/listings">See all listings</a>
          </p>
        </MessagePage>,
      );
      return;
    }
    sendPage(res, 200, <ListingPage listing={listing} deliverableSchema={terms?.deliverableSchema ?? null} baseUrl={baseUrl} platformFeePercent={config.platformFeePercent} />);
  });

  app.get('/terms', (_req, res) => {
    sendPage(res, 200, <TermsPage operatorContact={config.operatorContact} autoReleaseDays={config.autoReleaseDays} platformFeePercent={config.platformFeePercent} />);
  });
}

/** A browser asking for a page that does not exist gets a page; API clients keep the JSON envelope. */
export function htmlNotFound(req: Request, res: Response, next: NextFunction): void {
  if (req.method !== 'GET' || req.path.startsWith('/api/') || req.accepts(['json', 'html']) !== 'html') {
    next();
    return;
  }
  sendPage(
    res,
    404,
    <MessagePage title="Page not found" message="There is no page at this address.">
      <p>
        <a href="/">Home</a> · <a href="/listings">Listings</a>
      </p>
    </MessagePage>,
  );
}
