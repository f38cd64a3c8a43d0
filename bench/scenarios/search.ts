/**
 * search_services throughput over N listings: fills the listings schema with a fast bulk insert
 * (one INSERT … SELECT generate_series, bypassing the gate, which is not what is measured), then
 * calls listings.search through the broker for `seconds` per scenario. Use a throwaway database:
 * it deletes and re-creates its own lst_bench_* rows.
 */
import { createBroker } from '../../packages/broker';
import { loadConfig, type Config } from '../../packages/config';
import { base62 } from '../../packages/ids';
import { openDb } from '../../packages/db';
import agents from '../../services/agents/agents.service';
import listings from '../../services/listings/listings.service';
import { LISTINGS } from '../../packages/contracts/listings';

export interface SearchBenchRow {
  name: string;
  count: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

const TOPICS = [
  ['Write Jest unit tests for a TypeScript module', 'codegen'],
  ['Summarize research papers into a brief', 'research'],
  ['Write a production Dockerfile for a Node.js service', 'ops'],
  ['Design an SVG logo for a developer tool', 'design'],
  ['Clean and deduplicate a CSV dataset', 'data'],
  ['Translate documentation into Spanish', 'general'],
  ['Optimize slow PostgreSQL queries', 'data'],
  ['Set up GitHub Actions CI for a Python project', 'ops'],
  ['Build a React landing page', 'codegen'],
  ['Compare open-source libraries for PDF parsing', 'research'],
  ['Write Terraform modules for AWS', 'ops'],
  ['Scrape product prices into a spreadsheet', 'data'],
  ['Refactor legacy JavaScript to TypeScript', 'codegen'],
  ['Create Figma wireframes for a pricing page', 'design'],
  ['Market research on EV chargers', 'research'],
  ['Proofread a technical blog post', 'general'],
] as const;

const QUERIES = ['jest tests', 'dockerfile node', 'research papers summary', 'csv dataset', 'terraform aws', 'react landing page', 'postgres queries', 'logo svg', 'github actions ci', 'typescript refactor'];

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return 0;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] * 100) / 100;
}

async function run(name: string, seconds: number, concurrency: number, op: (i: number) => Promise<void>): Promise<SearchBenchRow> {
  const latencies: number[] = [];
  const start = Date.now();
  const deadline = start + seconds * 1000;
  let i = 0;
  const worker = async () => {
    while (Date.now() < deadline) {
      const t = process.hrtime.bigint();
      await op(i++);
      latencies.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (Date.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return { name, count: latencies.length, perSecond: Math.round((latencies.length / elapsed) * 10) / 10, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99) };
}

async function fill(config: Config, n: number): Promise<void> {
  const db = openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }, 'listings');
  try {
    await db.query(`DELETE FROM listings.listings WHERE id LIKE 'lst_bench_%'`);
    await db.query(
      `INSERT INTO listings.sellers (id, display_name, is_seed, registered_at, sales_count, rating_sum, rating_count)
       SELECT 'agt_bench_' || g, 'Bench Seller ' || g, g % 10 = 0, now() - (g || ' days')::interval, g % 7, (g % 7) * (1 + g % 5), g % 7
         FROM generate_series(0, 99) g
       ON CONFLICT (id) DO NOTHING`,
    );
    const titles = TOPICS.map((t) => t[0]);
    const categories = TOPICS.map((t) => t[1]);
    for (let from = 1; from <= n; from += 5000) {
      const to = Math.min(n, from + 4999);
      await db.query(
        `INSERT INTO listings.listings (id, seller_id, title, description, price_gas, category, quality_score, quality_signals)
         SELECT 'lst_bench_' || g, 'agt_bench_' || (g % 100),
                ($3::text[])[1 + g % $5] || ' (variant ' || g || ')',
                'You provide: the inputs for ' || lower(($3::text[])[1 + g % $5]) || ', up to ' || (g % 900 + 100) || ' lines. ' ||
                'You get: a Markdown report and a patch, delivered within ' || (1 + g % 5) || ' days. Scope limited to one order.',
                50 + (g * 37) % 1950, ($4::text[])[1 + g % $5], 55 + g % 46, '{}'::jsonb
           FROM generate_series($1::int, $2::int) g`,
        [from, to, titles, categories, TOPICS.length],
      );
    }
    await db.query('ANALYZE listings.listings');
  } finally {
    await db.close();
  }
}

export async function searchBench(opts: { databaseUrl: string | null; listings: number; seconds: number }): Promise<SearchBenchRow[]> {
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: 'memory://',
    LOG_LEVEL: 'warn',
    SWEEP_INTERVAL_MS: '0',
    SEED_ON_EMPTY: 'false',
    ...(opts.databaseUrl ? { DATABASE_URL: opts.databaseUrl } : {}),
  });
  const broker = createBroker({ config: { ...config, services: ['agents', 'listings'] }, services: [agents, listings], brokerOptions: { nodeID: `bench-search-${base62(6)}` } });
  await broker.start();
  const concurrency = opts.databaseUrl ? 8 : 1;
  const rows: SearchBenchRow[] = [];
  try {
    await fill(config, opts.listings);
    const search = (params: Record<string, unknown>) => broker.call(LISTINGS.search, params) as Promise<{ listings: unknown[]; nextCursor: string | null }>;
    rows.push(await run('search_services q, ranked by relevance', opts.seconds, concurrency, async (i) => {
      await search({ q: QUERIES[i % QUERIES.length], limit: 20 });
    }));
    rows.push(await run('search_services category + price filter, by quality', opts.seconds, concurrency, async (i) => {
      await search({ category: TOPICS[i % TOPICS.length][1], minPriceGas: 100, maxPriceGas: 800, sort: 'quality', limit: 20 });
    }));
    const first = await search({ sort: 'newest', limit: 20 });
    rows.push(await run('search_services newest, second page (cursor)', opts.seconds, concurrency, async () => {
      await search({ sort: 'newest', limit: 20, cursor: first.nextCursor });
    }));
  } finally {
    await broker.stop();
  }
  return rows;
}
