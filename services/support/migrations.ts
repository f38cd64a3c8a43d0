import type { Migration } from '../../packages/db';

export const migrations: Migration[] = [
  {
    version: 1,
    name: 'support',
    sql: `
      CREATE TABLE support.bugs (
        id text PRIMARY KEY,
        agent_id text NOT NULL,
        title text NOT NULL CHECK (char_length(title) BETWEEN 1 AND 200),
        description text NOT NULL,
        severity text NOT NULL CHECK (severity IN ('low', 'medium', 'high', 'critical')),
        status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'acknowledged', 'fixed', 'closed', 'wont_fix')),
        steps text,
        provider text,
        reproduction text,
        expected text,
        actual text,
        context jsonb,
        request jsonb,
        content_hash text NOT NULL,
        count integer NOT NULL DEFAULT 1 CHECK (count >= 1),
        report_request_id text,
        created_at timestamptz NOT NULL,
        last_reported_at timestamptz NOT NULL
      );
      CREATE INDEX bugs_fold ON support.bugs (agent_id, content_hash, last_reported_at DESC);
      CREATE INDEX bugs_created ON support.bugs (created_at DESC, id DESC);

      CREATE TABLE support.experiences (
        id text PRIMARY KEY,
        agent_id text NOT NULL,
        rating integer NOT NULL CHECK (rating BETWEEN 1 AND 5),
        journey_step text NOT NULL,
        what_worked text,
        what_failed text,
        created_at timestamptz NOT NULL
      );
      CREATE INDEX experiences_created ON support.experiences (created_at DESC, id DESC);

      -- ask_help questions and whether the knowledge base could answer them (counts for the operator).
      CREATE TABLE support.help_log (
        id text PRIMARY KEY,
        agent_id text NOT NULL,
        question text NOT NULL,
        stuck_state text,
        context jsonb,
        known boolean NOT NULL,
        sources text[] NOT NULL DEFAULT '{}',
        generated_by text NOT NULL,
        created_at timestamptz NOT NULL
      );
      CREATE INDEX help_log_created ON support.help_log (created_at DESC);
    `,
  },
  {
    version: 2,
    name: 'help_log_anonymous',
    // ask_help's public part answers callers whose configured key is not valid (issue #15).
    sql: `ALTER TABLE support.help_log ALTER COLUMN agent_id DROP NOT NULL;`,
  },
];
