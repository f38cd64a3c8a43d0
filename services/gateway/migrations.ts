import type { Migration } from '../../packages/db';

export const migrations: Migration[] = [
  {
    version: 1,
    name: 'idempotency and request log',
    sql: `
      CREATE TABLE gateway.idempotency (
        agent_id text NOT NULL,
        key text NOT NULL,
        fingerprint text NOT NULL,
        result jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz,
        PRIMARY KEY (agent_id, key)
      );
      CREATE TABLE gateway.request_log (
        request_id text PRIMARY KEY,
        agent_id text,
        tool text,
        status integer NOT NULL,
        error_code text,
        error_message text,
        at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX request_log_at ON gateway.request_log (at);
    `,
  },
  {
    // Operator actions under /api/admin (routes/admin-ops.ts): who, what, when, before/after. Append-only.
    version: 2,
    name: 'operator audit log',
    sql: `
      CREATE TABLE gateway.audit_log (
        id bigserial PRIMARY KEY,
        operator text NOT NULL,
        action text NOT NULL,
        target text,
        params jsonb,
        before jsonb,
        after jsonb,
        ok boolean NOT NULL,
        error text,
        request_id text,
        at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX audit_log_at ON gateway.audit_log (at DESC);
    `,
  },
  {
    // Issue #23: an Idempotency-Key claim is a lease the running call renews (a dead gateway's claim
    // is taken over within seconds), and console sessions can be ended server-side (logout).
    version: 3,
    name: 'idempotency leases, console sessions',
    sql: `
      ALTER TABLE gateway.idempotency ADD COLUMN lease_until timestamptz, ADD COLUMN holder text;
      CREATE TABLE gateway.console_sessions (
        id text PRIMARY KEY,
        operator text NOT NULL,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        ended_at timestamptz
      );
      CREATE INDEX console_sessions_expires ON gateway.console_sessions (expires_at);
    `,
  },
  {
    // Counters shared by every gateway replica (limits.ts): rate-limiter-flexible's table layout
    // (key, points, expire in epoch ms). Rows expire by themselves; the library deletes old ones.
    version: 4,
    name: 'shared rate limits',
    sql: `
      CREATE TABLE gateway.rate_limits (
        key varchar(255) PRIMARY KEY,
        points integer NOT NULL DEFAULT 0,
        expire bigint
      );
    `,
  },
  {
    // Issue #26: ask_help reads the caller's own recent failed calls.
    version: 5,
    name: 'request log by agent (failed calls)',
    sql: `
      CREATE INDEX request_log_agent_failed ON gateway.request_log (agent_id, at DESC) WHERE status >= 400;
    `,
  },
];
