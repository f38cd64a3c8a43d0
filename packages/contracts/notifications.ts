/**
 * Notifications' contract: the webhook event types agents subscribe to, and the actions the gateway
 * calls (the tools set_webhook, delete_webhook, list_webhook_deliveries). Notifications consumes
 * escrow's and payments' durable topics and calls nobody.
 */
import { callerOf, type Action } from './call';
import { PURCHASE_WEBHOOK_EVENTS, webhookRecipientsText, type PurchaseWebhookEvent } from './purchase-machine';
export const NOTIFICATIONS = {
  setWebhook: 'notifications.setWebhook',
  deleteWebhook: 'notifications.deleteWebhook',
  listDeliveries: 'notifications.listDeliveries',
  sweep: 'notifications.sweep',
} as const;

/** The webhook events that are not purchase notices, and who receives each. */
const OTHER_WEBHOOK_EVENTS = {
  'message.received': 'the other party of the purchase',
  'gas.credited': 'the agent credited',
  'cashout.paid': 'the seller cashing out',
  'cashout.rejected': 'the seller cashing out',
} as const;

/** What a webhook can receive; `events` of set_webhook is a subset (default: all). The purchase ones are the machine's notices. */
export const WEBHOOK_EVENTS = [...PURCHASE_WEBHOOK_EVENTS, ...(Object.keys(OTHER_WEBHOOK_EVENTS) as (keyof typeof OTHER_WEBHOOK_EVENTS)[])] as const;

export type WebhookEventType = PurchaseWebhookEvent | keyof typeof OTHER_WEBHOOK_EVENTS;

/** Who receives each event type, for the descriptions (the fan-out itself: services/notifications/events.ts). */
export const WEBHOOK_EVENT_RECIPIENTS = Object.fromEntries(
  WEBHOOK_EVENTS.map((e) => [e, e in OTHER_WEBHOOK_EVENTS ? OTHER_WEBHOOK_EVENTS[e as keyof typeof OTHER_WEBHOOK_EVENTS] : webhookRecipientsText(e as PurchaseWebhookEvent)]),
) as Record<WebhookEventType, string>;

// The webhook rules (retry window, pause, how many per agent) are market rules; kept importable from here.
export { MAX_WEBHOOKS_PER_AGENT, WEBHOOK_PAUSE_AFTER_HOURS, WEBHOOK_RETRY_HOURS } from '../market-rules';

/** The body POSTed to a webhook (its raw bytes are what the signature covers). */
export interface WebhookBody {
  id: string;
  type: WebhookEventType;
  createdAt: string;
  agentId: string;
  data: Record<string, unknown>;
}

export interface WebhookView {
  id: string;
  url: string;
  events: WebhookEventType[];
  createdAt: string;
  /** Since when every attempt failed (null: the last one succeeded, or none failed). */
  failingSince: string | null;
  /** Paused after failing for hours: nothing is sent until set_webhook is called with this url again. */
  pausedAt: string | null;
}

export interface DeliveryView {
  id: string;
  webhookId: string;
  eventId: string;
  type: WebhookEventType;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  createdAt: string;
}

/**
 * Notifications' durable topic (issue #22): whether an agent has webhooks now, published when a webhook is
 * set or deleted. Escrow keeps the answer and writes its notice events (purchase created, delivered, …)
 * only for agents that have webhooks. `version` orders the changes of one agent (microseconds, as text).
 */
export const NOTIFICATIONS_TOPICS = {
  webhooksChanged: 'notifications.webhooks_changed',
} as const;

export interface WebhooksChanged {
  agentId: string;
  hasWebhooks: boolean;
  version: string;
}

/** Notifications' actions other services call: name → params and result (callNotifications' types). */
export interface NotificationsActions {
  [NOTIFICATIONS.listDeliveries]: Action<{ limit?: number; cursor?: string }, { webhooks: WebhookView[]; deliveries: DeliveryView[] }>;
}

/** A notifications call whose params and result are the action's own. */
export const callNotifications = callerOf<NotificationsActions>();
