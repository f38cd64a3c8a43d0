/**
 * Full purchase lifecycles over HTTP against a running marketplace: purchase_service → deliver_work →
 * confirm_delivery, by several buyer/seller pairs at once. Buyers are funded the way a user would be:
 * buy_gas (fleet pack) and a POST to the sandbox checkout's Approve form — so the target must run
 * without Stripe keys (the sandbox checkout). Reports lifecycles per second (p50/p99 per lifecycle)
 * and each tool's latency.
 */
import http from 'node:http';
import { decideSandboxCheckout } from '../../test/kit/checkout';

export interface LifecycleBenchRow {
  name: string;
  count: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

const PRICE = 100;
const PAIRS = Number(process.env.BENCH_LIFECYCLE_PAIRS ?? 32);

export interface Agent {
  id: string;
  apiKey: string;
}

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return 0;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] * 100) / 100;
}

// The load generator shares the machine with what it measures: node:http with kept-alive connections
// costs a third of the CPU of fetch() per call, which is left to the marketplace.
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

/** HTTP requests the client sent (the message budget's first line). */
export const httpCalls = { count: 0 };

function post(url: string, payload: unknown, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  httpCalls.count++;
  const data = Buffer.from(JSON.stringify(payload));
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': String(data.length), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        } catch (err) {
          reject(err);
        }
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(data);
  });
}

async function tool(baseUrl: string, name: string, args: Record<string, unknown>, apiKey: string): Promise<any> {
  const { status, body } = await post(`${baseUrl}/api/agent`, { tool: name, arguments: args }, { authorization: `Bearer ${apiKey}` });
  if (status !== 200 || !body.ok) throw new Error(`${name}: ${status} ${JSON.stringify(body.error ?? body)}`);
  return body.result;
}

async function register(baseUrl: string, displayName: string): Promise<Agent> {
  const res = await fetch(`${baseUrl}/api/agent/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ provider: 'other', displayName }),
  });
  const body = (await res.json()) as any;
  if (res.status !== 200) throw new Error(`register: ${res.status} ${JSON.stringify(body)}`);
  return { id: body.agent.id, apiKey: body.apiKey };
}

/** buy_gas + the sandbox checkout's Approve button, then wait for the balance. */
async function fundWithSandbox(baseUrl: string, buyer: Agent, minGas: number): Promise<void> {
  for (;;) {
    const { gasBalance } = await tool(baseUrl, 'wallet', {}, buyer.apiKey);
    if (gasBalance >= minGas) return;
    const checkout = await tool(baseUrl, 'buy_gas', { packId: 'fleet' }, buyer.apiKey);
    const url = new URL(checkout.checkoutUrl);
    const approve = await decideSandboxCheckout(`${baseUrl}${url.pathname.replace(/\/$/, '')}`, 'approve');
    if (approve.status !== 200) throw new Error(`sandbox approve failed: ${approve.status} (is STRIPE_SECRET_KEY set? the bench needs the sandbox checkout)`);
  }
}

/** How a target funds a buyer (default: buy_gas + the sandbox checkout; the monolith grants gas). */
export type Funder = (baseUrl: string, buyer: Agent, minGas: number) => Promise<void>;

/** The monolith reference's funding: its grant_gas tool (issuance → agent, double-entry). */
export const grantFunder: Funder = async (baseUrl, buyer, minGas) => {
  const { gasBalance } = await tool(baseUrl, 'wallet', {}, buyer.apiKey);
  if (gasBalance < minGas) await tool(baseUrl, 'grant_gas', { amount: minGas * 2 }, buyer.apiKey);
};

export interface PreparedLifecycles {
  baseUrl: string;
  fund: Funder;
  pairs: Array<{ buyer: Agent; seller: Agent; listingId: string }>;
}

/** Registers the pairs, lists one service per seller and funds every buyer (outside any measured window). */
export async function prepareLifecycles(opts: { baseUrl: string; fund?: Funder }): Promise<PreparedLifecycles> {
  const { baseUrl } = opts;
  const fund = opts.fund ?? fundWithSandbox;
  const pairs: PreparedLifecycles['pairs'] = [];
  for (let i = 0; i < PAIRS; i++) {
    const [buyer, seller] = [await register(baseUrl, `Bench Buyer ${i}`), await register(baseUrl, `Bench Seller ${i}`)];
    const { listing } = await tool(
      baseUrl,
      'list_service',
      {
        title: `Write Jest unit tests for a TypeScript module (${i})`,
        description:
          'Send me the path of a TypeScript module and a short note on its public functions. I deliver a Jest test file with ten or more unit tests covering edge cases, plus a short Markdown coverage summary.',
        priceGas: PRICE,
        category: 'codegen',
      },
      seller.apiKey,
    );
    pairs.push({ buyer, seller, listingId: listing.id });
  }
  // Enough gas for the whole run (refilled between lifecycles if a fast machine uses it up).
  await Promise.all(pairs.map((p) => fund(baseUrl, p.buyer, 10_000)));
  return { baseUrl, fund, pairs };
}

export async function lifecycleBench(opts: { baseUrl: string; seconds: number; fund?: Funder }): Promise<LifecycleBenchRow[]> {
  return runLifecycles(await prepareLifecycles(opts), opts.seconds);
}

/** The measured window: every pair loops purchase → deliver → confirm until `seconds` have passed. */
export async function runLifecycles(prepared: PreparedLifecycles, seconds: number): Promise<LifecycleBenchRow[]> {
  const { baseUrl, fund, pairs } = prepared;
  const perTool: Record<string, number[]> = { purchase_service: [], deliver_work: [], confirm_delivery: [] };
  const lifecycles: number[] = [];
  const timed = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const t = process.hrtime.bigint();
    const r = await fn();
    perTool[name].push(Number(process.hrtime.bigint() - t) / 1e6);
    return r;
  };
  const start = Date.now();
  if (process.env.BENCH_WINDOW_LOG) console.log(`WINDOW start ${process.hrtime.bigint() / 1000n}`);
  const deadline = start + seconds * 1000;
  await Promise.all(
    pairs.map(async ({ buyer, seller, listingId }) => {
      let n = 0;
      while (Date.now() < deadline) {
        if (++n % 50 === 0) await fund(baseUrl, buyer, PRICE * 60);
        const t = process.hrtime.bigint();
        const { purchase } = await timed('purchase_service', () => tool(baseUrl, 'purchase_service', { listingId }, buyer.apiKey));
        await timed('deliver_work', () => tool(baseUrl, 'deliver_work', { purchaseId: purchase.id, delivery: { summary: `bench ${n}` } }, seller.apiKey));
        await timed('confirm_delivery', () => tool(baseUrl, 'confirm_delivery', { purchaseId: purchase.id }, buyer.apiKey));
        lifecycles.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
    }),
  );
  const elapsed = (Date.now() - start) / 1000;
  if (process.env.BENCH_WINDOW_LOG) console.log(`WINDOW end ${process.hrtime.bigint() / 1000n}`);
  const row = (name: string, values: number[]): LifecycleBenchRow => {
    const sorted = [...values].sort((a, b) => a - b);
    return { name, count: sorted.length, perSecond: Math.round((sorted.length / elapsed) * 10) / 10, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99) };
  };
  return [
    row(`purchase lifecycles (purchase → deliver → confirm, ${PAIRS} pairs)`, lifecycles),
    ...Object.entries(perTool).map(([name, v]) => row(`  ${name}`, v)),
  ];
}
