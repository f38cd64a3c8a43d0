/** MCP client helpers shared by the /mcp and stdio suites: a real SDK client, and the two journeys. */
import { expectLedgerClean } from '../../../test/kit/ledger';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { openSandboxCheckout, submitSandboxForm } from '../../../test/kit/checkout';

export async function connect(transport: Transport): Promise<Client> {
  const client = new Client({ name: 'agent-market-test', version: '0.0.1' });
  await client.connect(transport);
  return client;
}

export function httpTransport(baseUrl: string, opts: { apiKey?: string; via?: 'bearer' | 'query'; query?: string } = {}): Transport {
  const url = new URL(`${baseUrl}/mcp`);
  if (opts.query) for (const [k, v] of new URLSearchParams(opts.query)) url.searchParams.set(k, v);
  const headers: Record<string, string> = {};
  if (opts.apiKey && (opts.via ?? 'bearer') === 'bearer') headers.authorization = `Bearer ${opts.apiKey}`;
  if (opts.apiKey && opts.via === 'query') url.searchParams.set('api_key', opts.apiKey);
  return new StreamableHTTPClientTransport(url, { requestInit: { headers } });
}

/** Calls a tool and returns its structured result; throws with the envelope when it is a tool error. */
export async function callOk<T = any>(client: Client, name: string, args: Record<string, unknown> = {}): Promise<T> {
  const r: any = await client.callTool({ name, arguments: args });
  if (r.isError) throw new Error(`${name} failed: ${r.content?.[0]?.text}`);
  return (r.structuredContent ?? JSON.parse(r.content[0].text)) as T;
}

/** Calls a tool that must fail and returns its error envelope. */
export async function callErr(client: Client, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const r: any = await client.callTool({ name, arguments: args });
  if (!r.isError) throw new Error(`${name} unexpectedly succeeded: ${r.content?.[0]?.text}`);
  const envelope = JSON.parse(r.content[0].text);
  expect(r.structuredContent).toBeUndefined();
  return envelope;
}

export const GOOD_LISTING = {
  title: 'Write Jest unit tests for a TypeScript module',
  description:
    'Send me one TypeScript module (up to 300 lines) and a note on its intended behaviour. I deliver a Jest test file covering its exported functions, edge cases and error paths, plus a short coverage summary.',
  priceGas: 250,
  category: 'codegen',
};

/**
 * Buys gas the way the product works: buy_gas over MCP, then a "human" opens checkoutUrl and
 * presses Approve on the sandbox checkout page (a plain HTML form). Returns the checkout result.
 */
export async function buyGasAndApprove(client: Client, baseUrl: string, packId = 'starter'): Promise<any> {
  const checkout = await callOk(client, 'buy_gas', { packId, idempotencyKey: `gas-${Math.random()}` });
  // Test apps listen on a random port, so PUBLIC_BASE_URL (and checkoutUrl) name port 0: keep the path.
  const url = new URL(new URL(checkout.checkoutUrl).pathname, baseUrl).toString();
  const page = await openSandboxCheckout(url);
  expect(page.csrf).not.toBe('');
  const res = await submitSandboxForm(page, 'approve');
  if (res.status >= 400) throw new Error(`approving the checkout failed: ${res.status} ${res.html}`);
  return checkout;
}

export interface JourneyApp {
  baseUrl: string;
  call<T = any>(action: string, params?: Record<string, unknown>, meta?: Record<string, unknown>): Promise<T>;
}

async function eventuallyOk<T>(fn: () => Promise<T | null | undefined | false>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not reached in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The seller and buyer journeys, both through MCP clients: list → search → fund (checkout approved by
 * a "human") → purchase in escrow (retried with the same idempotencyKey) → ack → deliver → read the
 * delivery → confirm → rate → seller paid 90% → payout address → cash-out refused below the minimum.
 * Ends with the ledger audit.
 */
export async function runJourneys(app: JourneyApp, seller: Client, buyer: Client, tag: string): Promise<void> {
  // Seller lists a skill: the quality gate accepts a concrete listing; a vague one gets a report with hints.
  const vague = await callErr(seller, 'list_service', { title: 'Stuff', description: 'I can do many things for you, just ask me anything at all ok', priceGas: 100 });
  expect(vague.error.code).toBe('listing_rejected');
  expect(vague.error.hint).toBeTruthy();
  const title = `${GOOD_LISTING.title} (${tag})`;
  const { listing } = await callOk(seller, 'list_service', { ...GOOD_LISTING, title, idempotencyKey: `list-${tag}` });
  expect(listing).toMatchObject({ title, priceGas: 250, status: 'active' });

  // Buyer finds it (no key needed for search), checks the quote, and has no gas yet.
  const found = await eventuallyOk(async () => {
    const r = await callOk(buyer, 'search_services', { q: tag, category: 'codegen' });
    return r.listings.find((l: any) => l.id === listing.id);
  }, 'listing searchable');
  expect(found.quote).toMatchObject({ priceGas: 250, platformFeeGas: 25, sellerNetGas: 225 });
  const broke = await callErr(buyer, 'purchase_service', { listingId: listing.id });
  expect(broke.error.code).toBe('insufficient_gas');
  expect(broke.error.hint).toMatch(/buy_gas|starter|pack/i);

  // A human approves the starter pack at checkoutUrl; the agent polls wallet until the gas arrives.
  await buyGasAndApprove(buyer, app.baseUrl, 'starter');
  await eventuallyOk(async () => (await callOk(buyer, 'wallet')).gasBalance === 500, 'gas credited');

  // Purchase into escrow; a retry with the same idempotencyKey returns the same purchase and holds once.
  const purchaseArgs = { listingId: listing.id, requirements: 'Module: src/math.ts (attached below).', idempotencyKey: `buy-${tag}` };
  const { purchase } = await callOk(buyer, 'purchase_service', purchaseArgs);
  expect(purchase).toMatchObject({ status: 'awaiting_delivery', priceGas: 250 });
  const again = await callOk(buyer, 'purchase_service', purchaseArgs);
  expect(again.purchase.id).toBe(purchase.id);
  const held = await callOk(buyer, 'wallet');
  expect(held).toMatchObject({ gasBalance: 250, heldGas: 250 });

  // Seller sees the order, acknowledges and delivers.
  const orders = await callOk(seller, 'list_orders', { role: 'seller' });
  expect(orders.purchases.map((p: any) => p.id)).toContain(purchase.id);
  await callOk(seller, 'ack_purchase', { purchaseId: purchase.id });
  await callOk(seller, 'send_message', { purchaseId: purchase.id, body: 'Working on it.' });
  const delivered = await callOk(seller, 'deliver_work', {
    purchaseId: purchase.id,
    delivery: { summary: 'Jest tests for every exported function, 100% branch coverage.', files: { 'math.test.ts': 'test("adds", () => {});' } },
    idempotencyKey: `deliver-${tag}`,
  });
  expect(delivered.purchase.status).toBe('delivered');

  // Buyer reads messages and the delivery, confirms, rates.
  const msgs = await callOk(buyer, 'list_messages', { purchaseId: purchase.id });
  expect(JSON.stringify(msgs)).toContain('Working on it.');
  const delivery = await callOk(buyer, 'get_delivery', { purchaseId: purchase.id });
  expect(JSON.stringify(delivery)).toContain('Jest tests for every exported function');
  const confirmed = await callOk(buyer, 'confirm_delivery', { purchaseId: purchase.id, idempotencyKey: `confirm-${tag}` });
  expect(confirmed.purchase.status).toBe('completed');
  await callOk(buyer, 'rate_purchase', { purchaseId: purchase.id, rating: 5, comment: 'Great tests.' });
  expect((await callOk(buyer, 'get_purchase', { purchaseId: purchase.id })).purchase.status).toBe('completed');

  // Seller is paid 90% as sale_earn; cash-out needs a payout address and at least the minimum.
  const earned = await eventuallyOk(async () => {
    const w = await callOk(seller, 'wallet');
    return w.lifetimeEarnedGas === 225 && w;
  }, 'seller paid');
  expect(earned.gasBalance).toBe(225);
  await callOk(seller, 'connect_payouts', { btcAddress: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq' });
  const tooSmall = await callErr(seller, 'request_cashout', {});
  expect(tooSmall.error.hint).toBeTruthy();
  expect((await callOk(seller, 'wallet')).gasBalance).toBe(225);
  expect((await callOk(buyer, 'wallet')).gasBalance).toBe(250);

  await expectLedgerClean(app);
}
