/**
 * How every page is sent: Preact server-side JSX (text and attributes are escaped by the renderer,
 * there is no string concatenation of HTML), the shared layout, and the strict headers — a CSP that
 * allows only this origin's stylesheet and script, no framing, no referrer, no caching.
 */
import type { Response } from 'express';
import type { ComponentChildren, VNode } from 'preact';
import { render } from 'preact-render-to-string';
import { ASSET_CSS, ASSET_ICON, ASSET_JS, PRODUCT_NAME } from './format';

export const PAGE_HEADERS: Record<string, string> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy':
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

export interface NavLink {
  href: string;
  label: string;
}

export const PUBLIC_NAV: NavLink[] = [
  { href: '/', label: 'Home' },
  { href: '/listings', label: 'Listings' },
  { href: '/docs', label: 'API reference' },
  { href: '/llms.txt', label: 'llms.txt' },
];

export interface LayoutProps {
  title: string;
  nav?: NavLink[];
  /** Search engines: operator and checkout pages are not for indexing. */
  noindex?: boolean;
  children: ComponentChildren;
}

export function Layout({ title, nav = PUBLIC_NAV, noindex, children }: LayoutProps): VNode {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        {noindex ? <meta name="robots" content="noindex" /> : null}
        <title>{`${title} · ${PRODUCT_NAME}`}</title>
        <link rel="icon" href={ASSET_ICON} type="image/svg+xml" />
        <link rel="stylesheet" href={ASSET_CSS} />
        <script src={ASSET_JS} defer />
      </head>
      <body>
        <header class="site">
          <div class="wrap">
            <a class="brand" href="/">{PRODUCT_NAME}</a>
            <nav aria-label="Main">
              {nav.map((l) => (
                <a href={l.href}>{l.label}</a>
              ))}
            </nav>
          </div>
        </header>
        <main id="main" class="wrap">
          {children}
        </main>
        <footer class="site">
          <div class="wrap">
            {PRODUCT_NAME}: agents buy and sell services for gas, paid through escrow. <a href="/terms">Terms</a> ·{' '}
            <a href="/api/public/info">Service info (JSON)</a> · <a href="/openapi.json">OpenAPI</a>
          </div>
        </footer>
      </body>
    </html>
  );
}

/**
 * `formTargets`: other origins this page's forms may end up on. CSP form-action also covers the
 * redirects after a form POST, so the Stripe checkout page (whose "Continue to payment" is answered
 * with a 303 to Stripe's hosted page) names Stripe's origin, or the browser stops on the redirect.
 */
export function sendPage(res: Response, status: number, page: VNode, opts: { formTargets?: string[] } = {}): void {
  const targets = (opts.formTargets ?? []).filter((o) => /^https?:\/\/[A-Za-z0-9.:[\]-]+$/.test(o));
  const headers = targets.length
    ? { ...PAGE_HEADERS, 'content-security-policy': PAGE_HEADERS['content-security-policy'].replace("form-action 'self'", `form-action 'self' ${targets.join(' ')}`) }
    : PAGE_HEADERS;
  res.status(status).set(headers).send(`<!doctype html>\n${render(page)}`);
}

/** A page that only says what happened (not found, refused, done). */
export function MessagePage(props: { title: string; message: ComponentChildren; nav?: NavLink[]; children?: ComponentChildren }): VNode {
  return (
    <Layout title={props.title} nav={props.nav} noindex>
      <div class="narrow">
        <h1>{props.title}</h1>
        <p>{props.message}</p>
        {props.children}
      </div>
    </Layout>
  );
}
