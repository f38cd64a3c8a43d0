/** MCP client helpers shared by the /mcp and stdio suites: a real SDK client, and the two journeys. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { TestApp } from '../../../packages/testkit';

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
  expect(r.structuredContent).toEqual(envelope);
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
 * Gives the buyer gas the way a human would: buy_gas, then approve the sandbox checkout page.
 * Falls back to nothing: the caller checks the balance.
 */
export async function fundWithCheckout(app: TestApp, client: Client, packId = 'starter'): Promise<void> {
  const checkout = await callOk(client, 'buy_gas', { packId });
  const page = await fetch(checkout.checkoutUrl);
  const html = await page.text();
  const form = /<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) throw new Error(`no approval form on the checkout page:\n${html.slice(0, 500)}`);
  const fields = new URLSearchParams();
  for (const m of form[2].matchAll(/<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"[^>]*>/gi)) fields.set(m[1], m[2]);
  const approve = /<button[^>]*name="([^"]+)"[^>]*value="([^"]*)"[^>]*>\s*Approve/i.exec(form[2]);
  if (approve) fields.set(approve[1], approve[2]);
  const action = new URL(form[1].replace(/&amp;/g, '&'), checkout.checkoutUrl).toString();
  const res = await fetch(action, { method: 'POST', body: fields, redirect: 'manual' });
  if (res.status >= 400) throw new Error(`approving the checkout failed: ${res.status} ${await res.text()}`);
  void app;
}
