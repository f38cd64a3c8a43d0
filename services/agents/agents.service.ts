/**
 * agents: registration, API keys (stored only as sha256), authentication, whoami, referrals.
 * Emits agents.registered and agents.seed_changed through its outbox (listings' reputation model, escrow's referrals).
 */
import type { Context, Service } from 'moleculer';
import { dbMixin, type DbService } from '../../packages/db/mixin';
import { rowView } from '../../packages/db/row-view';
import { toolParams, type ParamRule } from '../../packages/tool-catalogue';
import { InvalidArgumentsError, NotFoundError, UnauthorizedError } from '../../packages/errors';
import { base62, newId } from '../../packages/ids';
import { enqueueEvent, startRelay, type OutboxRelay } from '../../packages/outbox';
import type { RuntimeService, ServiceSchemaOf } from '../../packages/runtime';
import { requireAgent, type CallMeta } from '../../packages/tool-catalogue/meta';
import { AGENTS_TOPICS, hashApiKey } from '../../packages/contracts/agents';
import { migrations } from './migrations';

export const API_KEY_PREFIX = 'rk_live_';

interface AgentRow {
  id: string;
  provider: string;
  display_name: string;
  label: string | null;
  referred_by: string | null;
  is_seed: boolean;
  created_at: Date;
}

export interface AgentView {
  id: string;
  provider: string;
  displayName: string;
  label: string | null;
  referredBy: string | null;
  isSeed: boolean;
  createdAt: string;
}

/** The columns an agent's queries return: its view, in order. */
const VIEW_COLUMNS = ['id', 'provider', 'display_name', 'label', 'referred_by', 'is_seed', 'created_at'] as const;
const COLUMNS = VIEW_COLUMNS.join(', ');

function toView(row: AgentRow): AgentView {
  return rowView(row, VIEW_COLUMNS);
}

/** register's displayName rule (its length bounds are the hint's). */
const DISPLAY_NAME = toolParams('register').displayName as ParamRule;

const AgentsService: ServiceSchemaOf<AgentsThis> = {
  name: 'agents',
  mixins: [dbMixin('agents', migrations)],

  actions: {
    register: {
      params: toolParams('register'),
      async handler(this: AgentsThis, ctx: Context<{ provider: string; displayName: string; label?: string; referredBy?: string; isSeed?: boolean }>) {
        const { provider, displayName, label, referredBy } = ctx.params;
        if (!displayName.trim()) throw new InvalidArgumentsError('displayName must not be blank.', { hint: `Send a short brand name, ${DISPLAY_NAME.min}–${DISPLAY_NAME.max} characters.` });
        const apiKey = API_KEY_PREFIX + base62(40);
        const id = newId('agt');
        const isSeed = (ctx.meta as CallMeta).internal === true && ctx.params.isSeed === true;
        const row = await this.db.transaction(async (tx) => {
          if (referredBy) {
            const ref = await tx.query('SELECT id FROM agents.agents WHERE id = $1', [referredBy]);
            if (ref.rowCount === 0) {
              throw new InvalidArgumentsError(`referredBy "${referredBy}" names no registered agent.`, {
                hint: 'Use the id your referrer got at registration (agt_…), or leave referredBy out.',
                details: { field: 'referredBy' },
              });
            }
          }
          const inserted = await tx.query<AgentRow>(
            `INSERT INTO agents.agents (id, provider, display_name, label, referred_by, api_key_hash, is_seed)
             VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
            [id, provider, displayName.trim(), label?.trim() || null, referredBy ?? null, hashApiKey(apiKey), isSeed],
          );
          const agent = inserted.rows[0];
          await enqueueEvent(tx, 'agents', AGENTS_TOPICS.registered, {
            agentId: agent.id,
            displayName: agent.display_name,
            referredBy: agent.referred_by,
            isSeed: agent.is_seed,
            createdAt: new Date(agent.created_at).toISOString(),
          });
          return agent;
        });
        void this.relay.kick();
        const agent = toView(row);
        return { apiKey, agent: { ...agent, gasBalance: 0 } };
      },
    },

    /** Internal: the gateway resolves a bearer key (cached there for a few seconds). */
    authenticate: {
      visibility: 'public',
      params: { apiKeyHash: { type: 'string', length: 64 } },
      async handler(this: AgentsThis, ctx: Context<{ apiKeyHash: string }>) {
        const r = await this.db.query<AgentRow>(
          `SELECT ${COLUMNS} FROM agents.agents WHERE api_key_hash = $1 AND key_revoked_at IS NULL`,
          [ctx.params.apiKeyHash],
        );
        return r.rows[0] ? toView(r.rows[0]) : null;
      },
    },

    whoami: {
      params: toolParams('whoami'),
      async handler(this: AgentsThis, ctx: Context<Record<string, never>, CallMeta>) {
        const { id } = requireAgent(ctx);
        // Identity only: the gateway adds the balance (ledger) and the reputation (listings).
        return { agent: toView(await this.loadAgent(id)) };
      },
    },

    /** Internal: public facts about an agent (display name for the checkout page, seed flag…). */
    get: {
      params: { agentId: 'string' },
      async handler(this: AgentsThis, ctx: Context<{ agentId: string }>) {
        return toView(await this.loadAgent(ctx.params.agentId));
      },
    },

    /** Internal: registrations count (liquidity density) — total and since an instant. */
    count: {
      params: { since: { type: 'string', optional: true } },
      async handler(this: AgentsThis, ctx: Context<{ since?: string }>) {
        const r = await this.db.query<{ total: string; recent: string }>(
          `SELECT count(*) AS total, count(*) FILTER (WHERE created_at >= COALESCE($1::timestamptz, '-infinity')) AS recent FROM agents.agents`,
          [ctx.params.since ?? null],
        );
        return { total: Number(r.rows[0].total), since: Number(r.rows[0].recent) };
      },
    },

    /** Internal (operator): mark or clear a seed seller. */
    setSeed: {
      params: { agentId: 'string', isSeed: 'boolean' },
      async handler(this: AgentsThis, ctx: Context<{ agentId: string; isSeed: boolean }>) {
        const row = await this.db.transaction(async (tx) => {
          const r = await tx.query<AgentRow>(`UPDATE agents.agents SET is_seed = $2 WHERE id = $1 RETURNING ${COLUMNS}`, [ctx.params.agentId, ctx.params.isSeed]);
          if (!r.rows[0]) throw new NotFoundError(`No agent ${ctx.params.agentId}.`);
          await enqueueEvent(tx, 'agents', AGENTS_TOPICS.seedChanged, { agentId: ctx.params.agentId, isSeed: ctx.params.isSeed });
          return r.rows[0];
        });
        void this.relay.kick();
        return toView(row);
      },
    },
  },

  methods: {
    async loadAgent(this: AgentsThis, id: string): Promise<AgentRow> {
      const r = await this.db.query<AgentRow>(`SELECT ${COLUMNS} FROM agents.agents WHERE id = $1`, [id]);
      if (!r.rows[0]) throw new UnauthorizedError('This API key belongs to no agent.');
      return r.rows[0];
    },
  },

  async started(this: AgentsThis) {
    const { config } = this;
    this.relay = startRelay(this.broker, this.db, config.sweepIntervalMs);
  },

  async stopped(this: AgentsThis) {
    await this.relay?.stop();
  },
};

type AgentsThis = Service & RuntimeService & DbService & {
  relay: OutboxRelay;
  loadAgent(id: string): Promise<AgentRow>;
};

export default AgentsService;
