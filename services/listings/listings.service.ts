/**
 * listings: list/update/search, enforcing the listing gate (packages/listing-gate: moderation, quality score),
 * public stats, and the seller reputation read model fed by agents.* and escrow.* events.
 * Never reads another service's tables: it calls agents.get or consumes events.
 */
import type { Context, Service } from 'moleculer';
import { createSchemaAjv } from '../../packages/safe-schema';
import { dbMixin, type DbService } from '../../packages/db/mixin';
import type { Db } from '../../packages/db';
import { toolParams, CATEGORIES } from '../../packages/tool-catalogue';
import { requireAgent, type AuthenticatedAgent, type CallMeta } from '../../packages/tool-catalogue/meta';
import {
  ForbiddenError,
  InvalidArgumentsError,
  InvalidStateError,
  ListingRejectedError,
  NotFoundError,
} from '../../packages/errors';
import { newId } from '../../packages/ids';
import { claimInbox, startRelay, type OutboxEvent, type OutboxRelay } from '../../packages/outbox';
import type { RuntimeService, ServiceSchemaOf } from '../../packages/runtime';
import { databaseUrlFor } from '../../packages/config';
import { callAgents, AGENTS, AGENTS_TOPICS } from '../../packages/contracts/agents';
import { ESCROW_TOPICS } from '../../packages/contracts/escrow';
import { DEFAULT_DELIVERY_DAYS, gasToUsd, MIN_DESCRIPTION_WORDS, saleSplit } from '../../packages/market-rules';
import { migrations } from './migrations';
import { completedSalesWriter, saleOf, type CompletedSale } from './completed-sales';
import type { Batcher } from '../../packages/db/batcher';
import { assessQuality, moderate, words, type QualityReport } from '../../packages/listing-gate';
import { buildSearch, LISTING_COLUMNS, SearchCache, tsqueryFor, websearchText, type SearchParams } from './search';
import { SEED_SELLERS } from './seed-data';
import type { SellerReputation } from '../../packages/contracts/listings';

/** The reputation read model's answer (the contract's shape). */
export type Reputation = SellerReputation;

interface ListingRow {
  id: string;
  seller_id: string;
  title: string;
  description: string;
  price_gas: number;
  terms_version: string | number;
  category: string;
  status: 'active' | 'paused' | 'removed';
  delivery_days: number;
  /** jsonb: parsed by pg, a string from some drivers (json() below reads both). */
  deliverable_schema: Record<string, unknown> | string | null;
  quality_score: number;
  quality_signals: Record<string, unknown> | string;
  removed_reason: string | null;
  created_at: Date;
  updated_at: Date;
  display_name: string | null;
  is_seed: boolean | null;
  registered_at: Date | null;
  sales_count: number | null;
  evaluated_sales_count: number | null;
  rating_sum: number | null;
  rating_count: number | null;
}

interface ListingInput {
  title: string;
  description: string;
  priceGas: number;
  category?: string;
  deliveryDays?: number;
  deliverableSchema?: Record<string, unknown>;
  /** Seeder only (meta.internal): stable key that makes seeding idempotent. */
  seedKey?: string;
}

const MAX_SCHEMA_BYTES = 20_000;
const DAY_MS = 86_400_000;

// Seller regexes are compiled by RE2 here too: a pattern it cannot run in linear time is refused at listing time.
const ajv = createSchemaAjv();

function json(v: unknown): unknown {
  return typeof v === 'string' ? JSON.parse(v) : v;
}

export function reputationOf(
  row: { is_seed: boolean | null; registered_at: Date | null; sales_count: number | null; evaluated_sales_count?: number | null; rating_sum: number | null; rating_count: number | null } | undefined,
  now: Date,
): Reputation {
  const salesCount = Number(row?.sales_count ?? 0);
  const ratingCount = Number(row?.rating_count ?? 0);
  const ratingSum = Number(row?.rating_sum ?? 0);
  const isSeed = row?.is_seed === true;
  const registeredAt = row?.registered_at ? new Date(row.registered_at).getTime() : null;
  return {
    salesCount,
    evaluatedSalesCount: Number(row?.evaluated_sales_count ?? 0),
    ratingAvg: ratingCount > 0 ? Math.round((ratingSum / ratingCount) * 100) / 100 : null,
    ratingCount,
    accountAgeDays: registeredAt === null ? 0 : Math.max(0, Math.floor((now.getTime() - registeredAt) / DAY_MS)),
    isSeed,
    unknown: !isSeed && salesCount === 0 && ratingCount === 0,
  };
}

export function listingView(row: ListingRow, now: Date, platformFeePercent: number) {
  const view: Record<string, unknown> = {
    id: row.id,
    title: row.title,
    description: row.description,
    priceGas: row.price_gas,
    category: row.category,
    status: row.status,
    deliveryDays: row.delivery_days,
    qualityScore: row.quality_score,
    qualitySignals: json(row.quality_signals),
    seller: { id: row.seller_id, displayName: row.display_name ?? '', reputation: reputationOf(row, now) },
    // purchaseWith: the arguments to buy at this price; maxPriceGas makes a raised price a 409, not a charge.
    quote: { ...saleSplit(row.price_gas, platformFeePercent), usd: gasToUsd(row.price_gas), purchaseWith: { listingId: row.id, maxPriceGas: row.price_gas } },
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
  if (row.deliverable_schema) view.deliverableSchema = json(row.deliverable_schema);
  if (row.status === 'removed') view.removedReason = row.removed_reason;
  return view;
}

function checkDescriptionWords(description: string): void {
  const n = words(description).length;
  if (n < MIN_DESCRIPTION_WORDS) {
    throw new InvalidArgumentsError(`description has ${n} words; at least ${MIN_DESCRIPTION_WORDS} are needed.`, {
      hint: `Write at least ${MIN_DESCRIPTION_WORDS} words: what the buyer provides ("You provide: …"), what they get back ("You get: …"), scope and turnaround.`,
      details: { field: 'description', words: n, minWords: MIN_DESCRIPTION_WORDS },
    });
  }
}

function checkDeliverableSchema(schema: unknown): void {
  if (schema === undefined) return;
  const fail = (why: string) => {
    throw new InvalidArgumentsError(`deliverableSchema is not a valid JSON Schema: ${why}`, {
      hint: 'Send a JSON Schema object, e.g. {"type":"object","required":["summary"],"properties":{"summary":{"type":"string"}}}, or leave deliverableSchema out.',
      details: { field: 'deliverableSchema' },
    });
  };
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) fail('it must be an object.');
  if (JSON.stringify(schema).length > MAX_SCHEMA_BYTES) fail(`it is larger than ${MAX_SCHEMA_BYTES} bytes.`);
  try {
    if (!ajv.validateSchema(schema as object)) fail(ajv.errorsText(ajv.errors));
    ajv.compile(schema as object);
  } catch (err) {
    if (err instanceof InvalidArgumentsError) throw err;
    fail((err as Error).message);
  }
}

function rejectByModeration(title: string, description: string): void {
  const verdict = moderate({ title, description });
  if (verdict.verdict === 'rejected') {
    throw new ListingRejectedError(`Moderation refused this listing: ${verdict.reasons.map((r) => r.code).join(', ')}.`, {
      hint: verdict.reasons.map((r) => r.hint).join(' '),
      details: { moderation: verdict },
    });
  }
}

function rejectByQuality(report: QualityReport): void {
  if (!report.passed) {
    throw new ListingRejectedError(`The listing scored ${report.score}; ${report.passScore} is needed to pass the quality gate.`, {
      hint: `Fix the issues in details.qualityReport.issues and call again: ${report.issues.map((i) => i.hint).join(' ')}`,
      details: { qualityReport: { score: report.score, passScore: report.passScore, signals: report.signals, issues: report.issues } },
    });
  }
}

function isInternal(ctx: Context<unknown, CallMeta>): boolean {
  return ctx.meta.internal === true;
}

const ListingsService: ServiceSchemaOf<ListingsThis> = {
  name: 'listings',
  mixins: [dbMixin('listings', migrations)],
  dependencies: ['agents'],

  actions: {
    create: {
      params: toolParams('list_service'),
      async handler(this: ListingsThis, ctx: Context<ListingInput, CallMeta>) {
        const agent = requireAgent(ctx);
        const seedKey = isInternal(ctx) ? ctx.params.seedKey : undefined;
        return { listing: await this.createListing(agent, ctx.params, seedKey) };
      },
    },

    update: {
      params: toolParams('update_service'),
      async handler(this: ListingsThis, ctx: Context<Partial<ListingInput> & { listingId: string; status?: 'active' | 'paused' }, CallMeta>) {
        const agent = requireAgent(ctx);
        const p = ctx.params;
        const current = await this.loadListing(p.listingId);
        if (!current) {
          throw new NotFoundError(`No listing ${p.listingId}.`, { hint: 'Use the id returned by list_service, or find yours with search_services {sellerId: "<your agent id>"}.' });
        }
        if (current.seller_id !== agent.id) {
          throw new ForbiddenError('Only the seller who created this listing can change it.', { hint: 'Update your own listings; list_service creates a new one.' });
        }
        if (current.status === 'removed') {
          throw new InvalidStateError(`This listing was taken down by the operator: ${current.removed_reason ?? 'no reason given'}.`, {
            hint: 'Create a new listing with list_service that follows the listing rules, or contact support with report_bug.',
          });
        }
        const next = {
          title: p.title ?? current.title,
          description: p.description ?? current.description,
          priceGas: p.priceGas ?? current.price_gas,
          category: p.category ?? current.category,
        };
        const textChanged = next.title !== current.title || next.description !== current.description;
        const gateChanged = textChanged || next.priceGas !== current.price_gas || next.category !== current.category;
        if (p.description !== undefined) checkDescriptionWords(next.description);
        checkDeliverableSchema(p.deliverableSchema);
        let quality: QualityReport | null = null;
        if (textChanged) rejectByModeration(next.title, next.description);
        if (gateChanged) {
          quality = assessQuality(next, await this.otherListingsOf(agent.id, current.id));
          rejectByQuality(quality);
        }
        await this.db.query(
          `UPDATE listings.listings
              SET title = $2, description = $3, price_gas = $4, category = $5,
                  delivery_days = COALESCE($6, delivery_days),
                  deliverable_schema = COALESCE($7::jsonb, deliverable_schema),
                  status = COALESCE($8, status),
                  quality_score = COALESCE($9, quality_score),
                  quality_signals = COALESCE($10::jsonb, quality_signals),
                  updated_at = now()
            WHERE id = $1 AND status <> 'removed'`,
          [
            current.id,
            next.title,
            next.description,
            next.priceGas,
            next.category,
            p.deliveryDays ?? null,
            p.deliverableSchema ? JSON.stringify(p.deliverableSchema) : null,
            p.status ?? null,
            quality ? quality.score : null,
            quality ? JSON.stringify(quality.signals) : null,
          ],
        );
        return { listing: listingView((await this.loadListing(current.id))!, this.now(), this.feePercent()) };
      },
    },

    search: {
      params: toolParams('search_services'),
      async handler(this: ListingsThis, ctx: Context<SearchParams>) {
        const p = ctx.params;
        if (p.minPriceGas !== undefined && p.maxPriceGas !== undefined && p.minPriceGas > p.maxPriceGas) {
          throw new InvalidArgumentsError('minPriceGas is greater than maxPriceGas.', { hint: 'Swap them, or leave one out.', details: { field: 'minPriceGas' } });
        }
        let tsquery: string | null = null;
        const text = p.q ? websearchText(p.q) : '';
        if (text) {
          tsquery = await tsqueryFor(this.db, text);
        }
        const built = buildSearch(p, tsquery);
        const cache = this.searchCache();
        const key = cache.key(built);
        let rows = cache.get(key);
        if (!rows) {
          const generation = cache.begin();
          rows = (await this.db.query<ListingRow & { sort_key: string }>(built.sql, built.params)).rows;
          cache.set(key, rows, generation);
        }
        const r = { rows };
        const page = r.rows.slice(0, built.limit);
        const now = this.now();
        return {
          listings: page.map((row) => listingView(row, now, this.feePercent())),
          nextCursor: r.rows.length > built.limit ? built.cursorFor(page[page.length - 1]) : null,
        };
      },
    },

    /** Internal (escrow): what a purchase needs to know about a listing. */
    getForPurchase: {
      params: { listingId: 'string' },
      async handler(this: ListingsThis, ctx: Context<{ listingId: string }>) {
        const row = await this.loadListing(ctx.params.listingId);
        if (!row) throw new NotFoundError(`No listing ${ctx.params.listingId}.`, { hint: 'Find listings with search_services and use their id.' });
        return {
          id: row.id,
          sellerId: row.seller_id,
          title: row.title,
          priceGas: row.price_gas,
          status: row.status,
          category: row.category,
          deliveryDays: row.delivery_days,
          deliverableSchema: row.deliverable_schema ? json(row.deliverable_schema) : null,
          termsVersion: Number(row.terms_version),
        };
      },
    },

    /** Internal: one listing's full view (whatever its status), for operators and other services. */
    get: {
      params: { listingId: 'string' },
      async handler(this: ListingsThis, ctx: Context<{ listingId: string }>) {
        const row = await this.loadListing(ctx.params.listingId);
        if (!row) throw new NotFoundError(`No listing ${ctx.params.listingId}.`);
        return listingView(row, this.now(), this.feePercent());
      },
    },

    /** Internal: a seller's reputation (whoami, search). */
    reputation: {
      params: { sellerId: 'string' },
      async handler(this: ListingsThis, ctx: Context<{ sellerId: string }>) {
        let seller = await this.loadSeller(ctx.params.sellerId);
        if (!seller) seller = await this.ensureSeller(ctx.params.sellerId, null);
        return reputationOf(seller ?? undefined, this.now());
      },
    },

    /** Internal: active listing counts by category (GET /api/public/stats). */
    stats: {
      params: {},
      async handler(this: ListingsThis) {
        const r = await this.db.query<{ category: string; n: string }>(
          `SELECT category, count(*) AS n FROM listings.listings WHERE status = 'active' GROUP BY category`,
        );
        const byCategory: Record<string, number> = Object.fromEntries(CATEGORIES.map((c) => [c, 0]));
        for (const row of r.rows) byCategory[row.category] = Number(row.n);
        return { total: Object.values(byCategory).reduce((a, b) => a + b, 0), byCategory };
      },
    },

    /** Operator: take a listing down (status removed, with a reason); it leaves search at once. */
    takeDown: {
      params: { listingId: 'string', reason: { type: 'string', min: 3, max: 1000, trim: true } },
      async handler(this: ListingsThis, ctx: Context<{ listingId: string; reason: string }, CallMeta>) {
        const meta = ctx.meta as CallMeta;
        if (meta.internal !== true && !meta.operator) throw new ForbiddenError('Only operators can take listings down.');
        const r = await this.db.query(
          `UPDATE listings.listings SET status = 'removed', removed_reason = $2, removed_at = now(), updated_at = now() WHERE id = $1`,
          [ctx.params.listingId, ctx.params.reason],
        );
        if (r.rowCount === 0) throw new NotFoundError(`No listing ${ctx.params.listingId}.`);
        return listingView((await this.loadListing(ctx.params.listingId))!, this.now(), this.feePercent());
      },
    },

    /** Operator: put a taken-down listing back (active again, reason cleared); only a removed listing. */
    restore: {
      params: { listingId: 'string' },
      async handler(this: ListingsThis, ctx: Context<{ listingId: string }, CallMeta>) {
        const meta = ctx.meta as CallMeta;
        if (meta.internal !== true && !meta.operator) throw new ForbiddenError('Only operators can restore listings.');
        const row = await this.loadListing(ctx.params.listingId);
        if (!row) throw new NotFoundError(`No listing ${ctx.params.listingId}.`);
        if (row.status !== 'removed') {
          throw new InvalidStateError(`Listing ${ctx.params.listingId} is ${row.status}, not taken down.`, { hint: 'Only a taken-down listing can be restored.', details: { status: row.status } });
        }
        await this.db.query(
          `UPDATE listings.listings SET status = 'active', removed_reason = NULL, removed_at = NULL, updated_at = now() WHERE id = $1 AND status = 'removed'`,
          [ctx.params.listingId],
        );
        return listingView((await this.loadListing(ctx.params.listingId))!, this.now(), this.feePercent());
      },
    },

    /** Internal (npm run seed): creates the seed sellers and their listings; idempotent. */
    seed: {
      params: {},
      async handler(this: ListingsThis, ctx: Context<unknown, CallMeta>) {
        if (!isInternal(ctx)) throw new ForbiddenError('Seeding is an internal operation.');
        return this.seedMarketplace();
      },
    },
  },

  channels: {
    [AGENTS_TOPICS.registered]: {
      group: 'listings',
      async handler(this: ListingsThis, event: OutboxEvent<{ agentId: string; displayName: string; isSeed: boolean; createdAt: string }>) {
        const db = this.readyDb();
        await db.transaction(async (tx) => {
          if (!(await claimInbox(tx, 'listings', event))) return;
          const d = event.data;
          await tx.query(
            `INSERT INTO listings.sellers (id, display_name, is_seed, registered_at) VALUES ($1, $2, $3, $4)
             ON CONFLICT (id) DO UPDATE SET display_name = EXCLUDED.display_name, is_seed = EXCLUDED.is_seed,
               registered_at = EXCLUDED.registered_at, updated_at = now()`,
            [d.agentId, d.displayName, d.isSeed === true, d.createdAt],
          );
        });
      },
    },
    [AGENTS_TOPICS.seedChanged]: {
      group: 'listings',
      async handler(this: ListingsThis, event: OutboxEvent<{ agentId: string; isSeed: boolean }>) {
        const db = this.readyDb();
        await db.transaction(async (tx) => {
          if (!(await claimInbox(tx, 'listings', event))) return;
          await tx.query(
            `INSERT INTO listings.sellers (id, is_seed) VALUES ($1, $2)
             ON CONFLICT (id) DO UPDATE SET is_seed = EXCLUDED.is_seed, updated_at = now()`,
            [event.data.agentId, event.data.isSeed === true],
          );
        });
      },
    },
    [ESCROW_TOPICS.completed]: {
      group: 'listings',
      async handler(this: ListingsThis, event: OutboxEvent<{ purchaseId: string; sellerId: string; completedAt?: string }>) {
        // The sale and the seller's count, written together with the other sales arriving now (completed-sales.ts).
        this.completedSales ??= completedSalesWriter(this.readyDb());
        await this.completedSales.submit(saleOf(event));
      },
    },
    [ESCROW_TOPICS.rated]: {
      group: 'listings',
      async handler(this: ListingsThis, event: OutboxEvent<{ purchaseId: string; sellerId: string; rating: number; previousRating: number | null }>) {
        const db = this.readyDb();
        await db.transaction(async (tx) => {
          if (!(await claimInbox(tx, 'listings', event))) return;
          const d = event.data;
          if (!Number.isInteger(d.rating) || d.rating < 1 || d.rating > 5) return;
          const existing = await tx.query<{ rating: number; rated_at: Date }>(
            `SELECT rating, rated_at FROM listings.ratings WHERE purchase_id = $1 FOR UPDATE`,
            [d.purchaseId],
          );
          const prev = existing.rows[0];
          let sumDelta: number;
          let countDelta: number;
          if (!prev) {
            await tx.query(`INSERT INTO listings.ratings (purchase_id, seller_id, rating, rated_at) VALUES ($1, $2, $3, $4)`, [
              d.purchaseId,
              d.sellerId,
              d.rating,
              event.occurredAt,
            ]);
            sumDelta = d.rating;
            countDelta = 1;
          } else {
            // The first rating arriving after a change, or an older change: the newer value stays.
            if (d.previousRating === null || d.previousRating === undefined) return;
            if (new Date(event.occurredAt).getTime() < new Date(prev.rated_at).getTime()) return;
            await tx.query(`UPDATE listings.ratings SET rating = $2, rated_at = $3 WHERE purchase_id = $1`, [d.purchaseId, d.rating, event.occurredAt]);
            sumDelta = d.rating - prev.rating;
            countDelta = 0;
          }
          // Two steps: a CHECK is evaluated on the proposed INSERT row even when it conflicts, and a delta may be negative.
          await tx.query(`INSERT INTO listings.sellers (id) VALUES ($1) ON CONFLICT (id) DO NOTHING`, [d.sellerId]);
          await tx.query(
            `UPDATE listings.sellers SET rating_sum = rating_sum + $2, rating_count = rating_count + $3, updated_at = now() WHERE id = $1`,
            [d.sellerId, sumDelta, countDelta],
          );
        });
      },
    },
  },

  methods: {
    /** Search result rows of this process (search.ts SearchCache); emptied by every write below. */
    searchCache(this: ListingsThis & { _searchCache?: SearchCache<ListingRow & { sort_key: string }> }) {
      this._searchCache ??= new SearchCache<ListingRow & { sort_key: string }>();
      return this._searchCache;
    },

    now(this: ListingsThis): Date {
      return this.clock.now();
    },

    /** The fee quoted to buyers now; each purchase fixes its own split when it is bought. */
    feePercent(this: ListingsThis): number {
      return this.config.platformFeePercent;
    },

    /** Channel handlers may run before started() opened the database: fail so the message is redelivered. */
    readyDb(this: ListingsThis): Db {
      if (!this.db) throw new Error('listings is starting; redeliver later');
      return this.db;
    },

    async loadListing(this: ListingsThis, id: string): Promise<ListingRow | null> {
      const r = await this.db.query<ListingRow>(
        `SELECT ${LISTING_COLUMNS}, l.terms_version FROM listings.listings l LEFT JOIN listings.sellers s ON s.id = l.seller_id WHERE l.id = $1`,
        [id],
      );
      return r.rows[0] ?? null;
    },

    async loadSeller(this: ListingsThis, id: string) {
      const r = await this.db.query<SellerRow>(
        `SELECT id, display_name, is_seed, registered_at, sales_count, evaluated_sales_count, rating_sum, rating_count FROM listings.sellers WHERE id = $1`,
        [id],
      );
      return r.rows[0] ?? null;
    },

    /**
     * Makes sure the read model knows a seller (its agents.registered event may still be on its way):
     * asks agents.get — outside a transaction — and upserts what it learns.
     */
    async ensureSeller(this: ListingsThis, sellerId: string, agent: AuthenticatedAgent | null) {
      const existing = await this.loadSeller(sellerId);
      if (existing?.registered_at && existing.display_name) return existing;
      let facts: { displayName: string | null; isSeed: boolean | null; createdAt: string | null } = {
        displayName: agent?.displayName ?? null,
        isSeed: null,
        createdAt: null,
      };
      try {
        const a = await callAgents(this.broker, AGENTS.get, { agentId: sellerId });
        facts = { displayName: a.displayName, isSeed: a.isSeed, createdAt: a.createdAt };
      } catch (err) {
        if (!agent) return existing;
        this.logger.warn(`agents.get ${sellerId} failed; reputation facts arrive with agents.registered`, (err as Error).message);
      }
      await this.db.query(
        `INSERT INTO listings.sellers (id, display_name, is_seed, registered_at) VALUES ($1, $2, COALESCE($3, false), $4)
         ON CONFLICT (id) DO UPDATE SET display_name = COALESCE(listings.sellers.display_name, EXCLUDED.display_name),
           is_seed = COALESCE($3, listings.sellers.is_seed),
           registered_at = COALESCE(listings.sellers.registered_at, EXCLUDED.registered_at), updated_at = now()`,
        [sellerId, facts.displayName, facts.isSeed, facts.createdAt],
      );
      return this.loadSeller(sellerId);
    },

    async otherListingsOf(this: ListingsThis, sellerId: string, exceptId: string | null) {
      const r = await this.db.query<{ title: string; description: string }>(
        `SELECT title, description FROM listings.listings WHERE seller_id = $1 AND status <> 'removed' AND id <> COALESCE($2, '') ORDER BY seq DESC LIMIT 200`,
        [sellerId, exceptId],
      );
      return r.rows;
    },

    /** The one create path: tool calls and the seeder. */
    async createListing(this: ListingsThis, agent: AuthenticatedAgent, input: ListingInput, seedKey?: string) {
      const title = input.title.trim();
      const description = input.description.trim();
      const category = input.category ?? 'general';
      checkDescriptionWords(description);
      checkDeliverableSchema(input.deliverableSchema);
      if (seedKey) {
        const existing = await this.db.query<{ id: string }>(`SELECT id FROM listings.listings WHERE seed_key = $1`, [seedKey]);
        if (existing.rows[0]) return listingView((await this.loadListing(existing.rows[0].id))!, this.now(), this.feePercent());
      }
      rejectByModeration(title, description);
      const quality = assessQuality({ title, description, priceGas: input.priceGas, category }, await this.otherListingsOf(agent.id, null));
      rejectByQuality(quality);
      await this.ensureSeller(agent.id, agent);
      const id = newId('lst');
      const inserted = await this.db.query(
        `INSERT INTO listings.listings (id, seller_id, title, description, price_gas, category, delivery_days, deliverable_schema,
                                        quality_score, quality_signals, seed_key)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10::jsonb, $11)
         ON CONFLICT (seed_key) DO NOTHING`,
        [
          id,
          agent.id,
          title,
          description,
          input.priceGas,
          category,
          input.deliveryDays ?? DEFAULT_DELIVERY_DAYS,
          input.deliverableSchema ? JSON.stringify(input.deliverableSchema) : null,
          quality.score,
          JSON.stringify(quality.signals),
          seedKey ?? null,
        ],
      );
      if (inserted.rowCount === 0 && seedKey) {
        const again = await this.db.query<{ id: string }>(`SELECT id FROM listings.listings WHERE seed_key = $1`, [seedKey]);
        return listingView((await this.loadListing(again.rows[0].id))!, this.now(), this.feePercent());
      }
      return listingView((await this.loadListing(id))!, this.now(), this.feePercent());
    },

    /** Registers the seed sellers (isSeed) and creates their listings; safe to run again. */
    async seedMarketplace(this: ListingsThis) {
      let sellers = 0;
      let listings = 0;
      for (const seller of SEED_SELLERS) {
        const known = await this.db.query<{ agent_id: string }>(`SELECT agent_id FROM listings.seed_sellers WHERE seed_key = $1`, [seller.seedKey]);
        let agentId = known.rows[0]?.agent_id;
        if (!agentId) {
          const reg = await callAgents(
            this.broker,
            AGENTS.register,
            { provider: 'other', displayName: seller.displayName, label: seller.label, isSeed: true },
            { meta: { internal: true } },
          );
          agentId = reg.agent.id;
          await this.db.query(`INSERT INTO listings.seed_sellers (seed_key, agent_id) VALUES ($1, $2) ON CONFLICT (seed_key) DO NOTHING`, [seller.seedKey, agentId]);
          const winner = await this.db.query<{ agent_id: string }>(`SELECT agent_id FROM listings.seed_sellers WHERE seed_key = $1`, [seller.seedKey]);
          agentId = winner.rows[0].agent_id;
          sellers++;
        }
        const agent: AuthenticatedAgent = { id: agentId, displayName: seller.displayName, provider: 'other' };
        for (const l of seller.listings) {
          const before = await this.db.query(`SELECT 1 FROM listings.listings WHERE seed_key = $1`, [l.seedKey]);
          if (before.rowCount) continue;
          await this.createListing(agent, l, l.seedKey);
          listings++;
        }
      }
      return { sellersCreated: sellers, listingsCreated: listings };
    },
  },

  async started(this: ListingsThis) {
    const { config } = this;
    // The terms_changed events the listings trigger writes (migrations.ts, version 3): published when a write
    // action ends (kick) and by the relay's passes (a row left by a killed process).
    this.relay = startRelay(this.broker, this.db, config.sweepIntervalMs, { leaseSeconds: 10 });
    if (!config.seedOnEmpty || databaseUrlFor(config, 'listings')) return;
    const r = await this.db.query<{ n: string }>(
      `SELECT (SELECT count(*) FROM listings.listings) + (SELECT count(*) FROM listings.seed_sellers) AS n`,
    );
    if (Number(r.rows[0].n) > 0) return;
    try {
      const done = await this.seedMarketplace();
      this.logger.info(`seeded an empty marketplace: ${done.sellersCreated} seed sellers, ${done.listingsCreated} listings`);
    } catch (err) {
      this.logger.error('seeding the empty marketplace failed; run `npm run seed` to retry', err);
    } finally {
      this.searchCache().invalidate();
    }
  },

  async stopped(this: ListingsThis) {
    await this.relay?.stop();
  },
};

/** A row of the sellers read model. */
interface SellerRow {
  id: string;
  display_name: string | null;
  is_seed: boolean;
  registered_at: Date | null;
  sales_count: number;
  evaluated_sales_count: number;
  rating_sum: number;
  rating_count: number;
}

type ListingsThis = Service & RuntimeService & DbService & {
  relay: OutboxRelay;
  completedSales?: Batcher<CompletedSale, void>;
  now(): Date;
  searchCache(): SearchCache<ListingRow & { sort_key: string }>;
  feePercent(): number;
  readyDb(): Db;
  loadListing(id: string): Promise<ListingRow | null>;
  loadSeller(id: string): Promise<SellerRow | null>;
  ensureSeller(sellerId: string, agent: AuthenticatedAgent | null): Promise<SellerRow | null>;
  otherListingsOf(sellerId: string, exceptId: string | null): Promise<Array<{ title: string; description: string }>>;
  createListing(agent: AuthenticatedAgent, input: ListingInput, seedKey?: string): Promise<Record<string, unknown>>;
  seedMarketplace(): Promise<{ sellersCreated: number; listingsCreated: number }>;
};

/**
 * Every action and channel that writes listings or sellers empties the search cache when it ends
 * (success or failure), so this process never serves rows from before its own write. The actions that
 * change a listing's terms also publish what the trigger wrote (the channels never change terms).
 */
/** An action's or a channel's handler: one argument (the context, or the event). */
type WriteHandler = (this: ListingsThis, ctxOrEvent: never) => Promise<unknown>;
function invalidatingSearch(handler: WriteHandler, publishTerms: boolean): WriteHandler {
  return async function (this: ListingsThis, ctxOrEvent: never) {
    try {
      return await handler.call(this, ctxOrEvent);
    } finally {
      this.searchCache().invalidate();
      if (publishTerms) await this.relay?.wake();
    }
  };
}
for (const name of ['create', 'update', 'takeDown', 'restore', 'seed']) {
  const action = (ListingsService.actions as Record<string, { handler: WriteHandler }>)[name];
  action.handler = invalidatingSearch(action.handler, true);
}
for (const channel of Object.values(ListingsService.channels as Record<string, { handler: WriteHandler }>)) {
  channel.handler = invalidatingSearch(channel.handler, false);
}

export default ListingsService;
