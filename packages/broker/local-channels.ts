/**
 * In-process channel adapter for the embedded mode. Unlike @moleculer/channels' Fake adapter
 * (fire-and-forget events), publish() awaits every subscribed group's handler and throws if one
 * fails, so an outbox relay only marks a message delivered once every consumer has handled it.
 * Consumers are idempotent, so re-delivering to a group that already succeeded is harmless.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const BaseAdapter = require('@moleculer/channels/src/adapters/base');

interface Chan {
  id: string;
  name: string;
  group: string;
  handler: (payload: unknown, raw: unknown) => Promise<void>;
}

export class LocalDurableAdapter extends BaseAdapter {
  private readonly subs = new Map<string, Chan>();

  async connect(): Promise<void> {
    this.connected = true;
  }

  async disconnect(): Promise<void> {
    this.connected = false;
  }

  async subscribe(chan: Chan): Promise<void> {
    this.subs.set(chan.id, chan);
  }

  async unsubscribe(chan: Chan): Promise<void> {
    this.subs.delete(chan.id);
  }

  async publish(channelName: string, payload: unknown, opts: { headers?: Record<string, string> } = {}): Promise<void> {
    // One handler per group, like a queue group: replicas of one service share the work.
    const byGroup = new Map<string, Chan>();
    for (const chan of this.subs.values()) {
      if (chan.name === channelName && !byGroup.has(chan.group)) byGroup.set(chan.group, chan);
    }
    const failures: unknown[] = [];
    for (const chan of byGroup.values()) {
      try {
        await chan.handler(payload, { headers: opts.headers ?? {} });
      } catch (err) {
        failures.push(err);
      }
    }
    if (failures.length) throw failures[0];
  }
}
