/**
 * Issue #22, "no work for nobody": escrow writes its notice events (purchase created, delivered, disputed,
 * approval required, approved — topics only notifications reads) only when one of their recipients has a
 * webhook. Notifications publishes `notifications.webhooks_changed` (durable, through its outbox) whenever
 * an agent's webhooks change; escrow keeps the latest answer per agent here, ordered by its version.
 * Money events (completed, refunded) and rated are always written: the ledger and listings read them.
 * Decision and its consistency window: docs/adr/0020-signed-webhooks.md (and 0003).
 */
import type { Service } from 'moleculer';
import { NOTIFICATIONS_TOPICS, type WebhooksChanged } from '../../packages/contracts/notifications';
import type { AudiencePredicate, OutboxEvent } from '../../packages/outbox';
import type { Db } from '../../packages/db';

/** SQL for escrow's migration. */
export const WEBHOOK_AGENTS_SQL = `
  CREATE TABLE escrow.webhook_agents (
    agent_id text PRIMARY KEY,
    has_webhooks boolean NOT NULL,
    version bigint NOT NULL
  );
`;

/** The outbox's audience predicate: one of the agents has webhooks. */
export const hasWebhooks: AudiencePredicate = (agentsJson) =>
  `EXISTS (SELECT 1 FROM escrow.webhook_agents w WHERE w.has_webhooks AND w.agent_id IN (SELECT jsonb_array_elements_text(${agentsJson})))`;

/** Escrow's `channels` (its schema's key, read by the durable-events middleware). */
export const audienceChannels = {
    [NOTIFICATIONS_TOPICS.webhooksChanged]: {
      group: 'escrow',
      // Idempotent and order-proof without an inbox: an older version never overwrites a newer one.
      async handler(this: Service & { db: Db }, event: OutboxEvent<WebhooksChanged>) {
        const { agentId, hasWebhooks: has, version } = event.data;
        await this.db.query(
          `INSERT INTO escrow.webhook_agents (agent_id, has_webhooks, version) VALUES ($1, $2, $3::bigint)
           ON CONFLICT (agent_id) DO UPDATE SET has_webhooks = EXCLUDED.has_webhooks, version = EXCLUDED.version
            WHERE escrow.webhook_agents.version < EXCLUDED.version`,
          [agentId, has, version],
        );
      },
    },
};
