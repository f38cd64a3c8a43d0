/**
 * Screenshots of the pages a person sees, at desktop and phone widths, from a running server
 * (`npm start`): /, /listings, a listing, a sandbox checkout (registers an agent and starts a
 * checkout — development servers only) and the operator console (signed in with ADMIN_TOKEN, or
 * with DATA_DIR/operator-token on the same machine).
 *
 *   npx tsx scripts/screenshots.ts [outDir]     (MARKET_BASE_URL, default http://localhost:3000)
 */
import fs from 'node:fs';
import path from 'node:path';
import { DESKTOP, PHONE, chromiumMissing, launchChromium } from '../test/kit/chromium';

async function main(): Promise<void> {
  if (chromiumMissing) {
    console.error(chromiumMissing);
    process.exit(2);
  }
  const base = (process.env.MARKET_BASE_URL ?? `http://localhost:${process.env.PORT ?? 3000}`).replace(/\/+$/, '');
  const out = path.resolve(process.argv[2] ?? 'screenshots');
  fs.mkdirSync(out, { recursive: true });
  const token =
    process.env.ADMIN_TOKEN ??
    (() => {
      try {
        return fs.readFileSync(path.join(process.env.DATA_DIR ?? 'data', 'operator-token'), 'utf8').trim();
      } catch {
        return null;
      }
    })();

  const reg = await fetch(`${base}/api/agent/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ provider: 'claude_code', displayName: 'Screenshot Agent' }),
  }).then((r) => r.json() as Promise<{ apiKey: string }>);
  const buy = await fetch(`${base}/api/agent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${reg.apiKey}` },
    body: JSON.stringify({ tool: 'buy_gas', arguments: { packId: 'starter' } }),
  }).then((r) => r.json() as Promise<{ ok: boolean; result: { checkoutUrl: string } }>);
  const search = await fetch(`${base}/api/listings?limit=1`).then((r) => r.json() as Promise<{ listings?: Array<{ id: string }> }>);
  const listingId: string | undefined = search.listings?.[0]?.id;

  const pages: Array<[string, string]> = [
    ['home', '/'],
    ['listings', '/listings'],
    ...(listingId ? ([['listing', `/listings/${listingId}`]] as Array<[string, string]>) : []),
    ...(buy.ok ? ([['checkout', new URL(buy.result.checkoutUrl).pathname]] as Array<[string, string]>) : []),
    ['admin-login', '/admin/login'],
  ];

  const browser = await launchChromium();
  try {
    for (const [size, viewport] of [['desktop', DESKTOP], ['phone', PHONE]] as const) {
      const context = await browser.newContext({ viewport, baseURL: base });
      const page = await context.newPage();
      for (const [name, url] of pages) {
        await page.goto(url);
        await page.screenshot({ path: path.join(out, `${name}-${size}.png`), fullPage: true });
      }
      if (token) {
        await page.goto('/admin/login');
        await page.getByLabel('Admin token').fill(token);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.waitForURL(/\/admin$/);
        for (const [name, url] of [['admin', '/admin'], ['admin-disputes', '/admin/disputes'], ['admin-payouts', '/admin/payouts']]) {
          await page.goto(url);
          await page.screenshot({ path: path.join(out, `${name}-${size}.png`), fullPage: true });
        }
      }
      await context.close();
    }
  } finally {
    await browser.close();
  }
  console.log(`screenshots in ${out}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
