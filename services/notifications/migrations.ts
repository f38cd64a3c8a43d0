import type { Migration } from '../../packages/db';
import { outboxTablesSql } from '../../packages/outbox';
import { NOTIFICATIONS_TOPICS } from '../../packages/contracts/notifications';

export const migrations: Migration[] = [
  {
    version: 1,
    name: 'webhooks and deliveries',
    sql: `
      CREATE TABLE notifications.webhooks (
        id text PRIMARY KEY,
        agent_id text NOT NULL,
        url text NOT NULL,
        events text[] NOT NULL,
        secret text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz
      );
      CREATE UNIQUE INDEX webhooks_agent_url ON notifications.webhooks (agent_id, url) WHERE deleted_at IS NULL;
      CREATE INDEX webhooks_agent ON notifications.webhooks (agent_id) WHERE deleted_at IS NULL;
      -- One row per (event, webhook): the body is stored as sent, so every retry signs the same bytes.
      CREATE TABLE notifications.deliveries (
        id text PRIMARY KEY,
        webhook_id text NOT NULL REFERENCES notifications.webhooks (id),
        agent_id text NOT NULL,
        event_id text NOT NULL,
        event_type text NOT NULL,
        body text NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        give_up_at timestamptz NOT NULL,
        claimed_until timestamptz,
        last_status_code integer,
        last_error text,
        delivered_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (webhook_id, event_id)
      );
      CREATE INDEX deliveries_due ON notifications.deliveries (next_attempt_at) WHERE status = 'pending';
      CREATE INDEX deliveries_agent ON notifications.deliveries (agent_id, created_at DESC, id DESC);
      ${outboxTablesSql('notifications')}
    `,
  },
  {
    version: 2,
    name: 'webhooks failing for hours are paused (issue #23)',
    sql: `
      -- failing_since: the first failed attempt since the last 2xx (NULL while healthy). An endpoint that
      -- has failed for WEBHOOK_PAUSE_AFTER_HOURS is paused: its deliveries stay pending (kept, listed)
      -- and are not attempted until the agent calls set_webhook with the same url again.
      ALTER TABLE notifications.webhooks ADD COLUMN failing_since timestamptz, ADD COLUMN paused_at timestamptz;
      CREATE INDEX deliveries_webhook_claimed ON notifications.deliveries (webhook_id, claimed_until) WHERE status = 'pending';
    `,
  },
  {
    version: 3,
    name: 'escrow learns which agents have webhooks (issue #22)',
    sql: `
      -- The agents that had webhooks before this version: escrow hears of them as of any later change.
      INSERT INTO notifications.outbox (topic, payload)
      SELECT '${NOTIFICATIONS_TOPICS.webhooksChanged}',
             jsonb_build_object('agentId', agent_id, 'hasWebhooks', true,
                                'version', ((extract(epoch from clock_timestamp()) * 1000000)::bigint)::text)
        FROM notifications.webhooks WHERE deleted_at IS NULL GROUP BY agent_id;
    `,
  },
];
