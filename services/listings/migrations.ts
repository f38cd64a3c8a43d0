import type { Migration } from '../../packages/db';
import { outboxTablesSql } from '../../packages/outbox';
import { LISTINGS_TOPICS } from '../../packages/contracts/listings';

export const migrations: Migration[] = [
  {
    version: 1,
    name: 'listings, reputation read model, full-text search',
    sql: `
      CREATE TABLE listings.listings (
        id text PRIMARY KEY,
        seller_id text NOT NULL,
        title text NOT NULL CHECK (char_length(title) BETWEEN 3 AND 120),
        description text NOT NULL CHECK (char_length(description) BETWEEN 40 AND 4000),
        price_gas integer NOT NULL CHECK (price_gas >= 10),
        category text NOT NULL CHECK (category IN ('codegen', 'research', 'ops', 'design', 'data', 'general')),
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused', 'removed')),
        delivery_days integer NOT NULL DEFAULT 7 CHECK (delivery_days BETWEEN 1 AND 30),
        deliverable_schema jsonb,
        quality_score integer NOT NULL CHECK (quality_score BETWEEN 0 AND 100),
        quality_signals jsonb NOT NULL,
        removed_reason text,
        removed_at timestamptz,
        seed_key text UNIQUE,
        -- Insertion order: the "newest" sort key (unique, so pages never overlap).
        seq bigserial NOT NULL UNIQUE,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        -- Maintained by PostgreSQL on every write: title weighs more than description (redefined in version 2).
        tsv tsvector GENERATED ALWAYS AS (
          setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', description), 'B')
        ) STORED
      );
      CREATE INDEX listings_tsv ON listings.listings USING gin (tsv);
      CREATE INDEX listings_active_category ON listings.listings (category, price_gas, id) WHERE status = 'active';
      CREATE INDEX listings_active_price ON listings.listings (price_gas, id) WHERE status = 'active';
      CREATE INDEX listings_active_quality ON listings.listings (quality_score DESC, id) WHERE status = 'active';
      CREATE INDEX listings_active_seq ON listings.listings (seq DESC) WHERE status = 'active';
      CREATE INDEX listings_seller ON listings.listings (seller_id);

      -- Reputation read model, fed by agents.* and escrow.* events (never by reading their tables).
      CREATE TABLE listings.sellers (
        id text PRIMARY KEY,
        display_name text,
        is_seed boolean NOT NULL DEFAULT false,
        registered_at timestamptz,
        sales_count integer NOT NULL DEFAULT 0 CHECK (sales_count >= 0),
        rating_sum integer NOT NULL DEFAULT 0 CHECK (rating_sum >= 0),
        rating_count integer NOT NULL DEFAULT 0 CHECK (rating_count >= 0),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      -- One row per completed sale and per rated purchase: a second event about the same purchase never counts twice.
      CREATE TABLE listings.completed_sales (
        purchase_id text PRIMARY KEY,
        seller_id text NOT NULL,
        completed_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE listings.ratings (
        purchase_id text PRIMARY KEY,
        seller_id text NOT NULL,
        rating integer NOT NULL CHECK (rating BETWEEN 1 AND 5),
        rated_at timestamptz NOT NULL
      );
      -- Seed sellers created by the seeder, by stable key (idempotent seeding).
      CREATE TABLE listings.seed_sellers (
        seed_key text PRIMARY KEY,
        agent_id text NOT NULL UNIQUE,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      ${outboxTablesSql('listings')}
    `,
  },
  {
    version: 2,
    name: 'search splits "Node.js" and "CI/CD" into words',
    sql: `
      -- The search query is split the same way (TSQUERY_SQL in search.ts), so "node" finds "Node.js".
      ALTER TABLE listings.listings DROP COLUMN tsv;
      ALTER TABLE listings.listings ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', translate(title, './', '  ')), 'A')
        || setweight(to_tsvector('english', translate(description, './', '  ')), 'B')
      ) STORED;
      CREATE INDEX listings_tsv ON listings.listings USING gin (tsv);
    `,
  },
  {
    version: 3,
    name: 'buying terms carry a version and are published on every change (escrow keeps a copy)',
    sql: `
      -- Increases with every change of a listing's buying terms; nextval runs when the row is written, after
      -- its lock is taken, so of two racing changes the one committed last has the higher version.
      CREATE SEQUENCE listings.terms_version_seq;
      ALTER TABLE listings.listings ADD COLUMN terms_version bigint NOT NULL DEFAULT 0;
      UPDATE listings.listings SET terms_version = nextval('listings.terms_version_seq');

      -- The terms escrow copies (ListingForPurchase), into the outbox with the change that made them: a
      -- trigger, so no writer of listings can forget to tell.
      CREATE FUNCTION listings.publish_terms() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'UPDATE'
           AND NEW.seller_id IS NOT DISTINCT FROM OLD.seller_id AND NEW.title IS NOT DISTINCT FROM OLD.title
           AND NEW.price_gas IS NOT DISTINCT FROM OLD.price_gas AND NEW.status IS NOT DISTINCT FROM OLD.status
           AND NEW.category IS NOT DISTINCT FROM OLD.category AND NEW.delivery_days IS NOT DISTINCT FROM OLD.delivery_days
           AND NEW.deliverable_schema::text IS NOT DISTINCT FROM OLD.deliverable_schema::text THEN
          RETURN NEW;
        END IF;
        NEW.terms_version := nextval('listings.terms_version_seq');
        INSERT INTO listings.outbox (topic, payload) VALUES ('${LISTINGS_TOPICS.termsChanged}', jsonb_build_object(
          'id', NEW.id, 'sellerId', NEW.seller_id, 'title', NEW.title, 'priceGas', NEW.price_gas, 'status', NEW.status,
          'category', NEW.category, 'deliveryDays', NEW.delivery_days, 'deliverableSchema', NEW.deliverable_schema::jsonb,
          'termsVersion', NEW.terms_version));
        RETURN NEW;
      END $$;
      CREATE TRIGGER listings_publish_terms BEFORE INSERT OR UPDATE ON listings.listings
        FOR EACH ROW EXECUTE FUNCTION listings.publish_terms();
    `,
  },
  {
    version: 4,
    name: "sales an evaluator accepted (issue #35): search_services' minEvaluatedSales",
    sql: `
      ALTER TABLE listings.completed_sales ADD COLUMN evaluated boolean NOT NULL DEFAULT false;
      ALTER TABLE listings.sellers ADD COLUMN evaluated_sales_count integer NOT NULL DEFAULT 0 CHECK (evaluated_sales_count >= 0);
    `,
  },
];
