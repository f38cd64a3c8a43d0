/**
 * Tools whose answer joins several services. The gateway is the top layer, so it is the one that
 * asks each service for its part: no service below has to call a sibling or a layer above it.
 *
 *   whoami            agents (identity, as the key's authentication loaded it) + listings (reputation)
 *                     + ledger (balance) + escrow (spending limits)
 *   wallet            ledger (figures, entries) + payments (cash-outs) + escrow (spending limits)
 *   ask_help,         the caller's own request-log entry (the gateway's) handed to support in
 *   report_bug        meta, so support never calls the gateway back; ask_help also gets a small
 *                     snapshot of the caller's own account (escrow list_orders, ledger balance
 *                     figures, escrow limits, payments open checkouts, notifications webhooks
 *                     and deliveries, its own
 *                     recent failed requests), read with the caller's identity (issue #26)
 *
 * Reads never write: neither whoami nor wallet reconciles checkouts (the payments sweeper does).
 * whoami asks for identity and balance in parallel and takes the reputation from a short per-agent
 * cache (REPUTATION_CACHE_MS): a seller's sales count and rating change on completed sales, not per
 * poll, and agents poll whoami a lot.
 */
import type { ServiceSchemaOf } from '../../packages/runtime';
import type { Context } from 'moleculer';
import { toolParams } from '../../packages/tool-catalogue';
import { NotFoundError } from '../../packages/errors';
import { requireAgent, type CallMeta, type RequestLogEntry } from '../../packages/tool-catalogue/meta';
import { callAgents, AGENTS } from '../../packages/contracts/agents';
import { callEscrow, ESCROW, type SpendingLimitsView } from '../../packages/contracts/escrow';
import { callLedger, LEDGER } from '../../packages/contracts/ledger';

import { callListings, LISTINGS, type SellerReputation } from '../../packages/contracts/listings';
import { callPayments, PAYMENTS } from '../../packages/contracts/payments';
import { SUPPORT, type HelpAccount } from '../../packages/contracts/support';
import { callNotifications, NOTIFICATIONS } from '../../packages/contracts/notifications';

import type { RequestLog } from './request-log';

type GatewayThis = { requestLog: RequestLog; reputationCache: ReputationCache; logger: { warn(...a: unknown[]): void } };

const REPUTATION_CACHE_MS = 10_000;
const REPUTATION_CACHE_MAX = 10_000;

/** Reputation by agent id for a few seconds; the oldest entries go first when it is full. */
class ReputationCache {
  private readonly entries = new Map<string, { at: number; reputation: SellerReputation }>();

  get(agentId: string, now: number): SellerReputation | null {
    const e = this.entries.get(agentId);
    if (!e) return null;
    if (now - e.at > REPUTATION_CACHE_MS) {
      this.entries.delete(agentId);
      return null;
    }
    return e.reputation;
  }

  set(agentId: string, reputation: SellerReputation, now: number): void {
    if (this.entries.size >= REPUTATION_CACHE_MAX) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(agentId, { at: now, reputation });
  }
}

/** The caller's own entry of the request log, or null (unknown or someone else's). */
async function ownRequest(self: GatewayThis, requestId: string, agentId: string): Promise<RequestLogEntry | null> {
  try {
    let entry = await self.requestLog.find(requestId);
    if (!entry) {
      // Another gateway replica may still hold it in its write buffer (flushed every 250 ms).
      await new Promise((r) => setTimeout(r, 300));
      entry = await self.requestLog.find(requestId);
    }
    return entry && entry.agentId === agentId ? entry : null;
  } catch (err) {
    self.logger.warn(`gateway: request log lookup failed (${(err as Error).message})`);
    return null;
  }
}

/** The agent's spending limits, or null while escrow cannot answer (the balance still shows). */
function spendingLimitsOf(ctx: Context<unknown, CallMeta>, agentId: string): Promise<SpendingLimitsView | null> {
  return callEscrow(ctx, ESCROW.limitsOf, { agentId }).catch(() => null);
}

/** How long ask_help waits for each part of the account snapshot before answering without it. */
const HELP_ACCOUNT_TIMEOUT_MS = 1500;
const HELP_ACCOUNT_PURCHASES = 10;

function orNull<T>(p: Promise<T>): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), HELP_ACCOUNT_TIMEOUT_MS);
    timer.unref();
  });
  return Promise.race([p.catch(() => null), timeout]).finally(() => clearTimeout(timer));
}

/**
 * The caller's own account for ask_help: each read goes through the tool actions with the caller's
 * own identity in meta (so it can only ever see the caller's purchases, webhooks and deliveries),
 * or takes the caller's agent id (balance, limits, request log). A part that fails is null.
 */
async function helpAccountOf(self: GatewayThis, ctx: Context<unknown, CallMeta>, agentId: string): Promise<HelpAccount> {
  const [orders, figures, limits, hooks, recentErrors, checkouts] = await Promise.all([
    orNull(callEscrow(ctx, ESCROW.listOrders, { role: 'all', limit: HELP_ACCOUNT_PURCHASES })),
    orNull(callLedger(ctx, LEDGER.walletFigures, { agentId, limit: 1 })),
    orNull(callEscrow(ctx, ESCROW.limitsOf, { agentId })),
    orNull(callNotifications(ctx, NOTIFICATIONS.listDeliveries, { limit: 20 })),
    orNull(self.requestLog.recentFailures(agentId, 5)),
    orNull(callPayments(ctx, PAYMENTS.listCheckouts, {})),
  ]);
  return {
    agentId,
    at: new Date().toISOString(),
    purchases: orders?.purchases ?? null,
    wallet: figures ? { gasBalance: figures.gasBalance, heldGas: figures.heldGas, pendingEarningsGas: figures.pendingEarningsGas, withdrawableGas: figures.withdrawableGas } : null,
    limits,
    webhooks: hooks?.webhooks ?? null,
    failedDeliveries: hooks ? hooks.deliveries.filter((d) => d.status === 'failed' || (d.status === 'pending' && d.attempts > 0)) : null,
    recentErrors,
    checkouts: checkouts?.checkouts ?? null,
  };
}

/** Forwards a support tool with the caller's own request-log entry in meta.requestLogEntry (ask_help: and its account). */
function withOwnRequest(tool: 'ask_help' | 'report_bug', action: string) {
  return {
    params: toolParams(tool),
    async handler(this: GatewayThis, ctx: Context<{ context?: { requestId?: unknown } }, CallMeta>) {
      // A caller whose configured key was ignored reaches ask_help's public part: the docs, not its own requests.
      const agent = ctx.meta.apiKeyIgnored && tool === 'ask_help' ? null : requireAgent(ctx);
      const requestId = ctx.params.context?.requestId;
      const [requestLogEntry, helpAccount] = await Promise.all([
        agent && typeof requestId === 'string' ? ownRequest(this, requestId, agent.id) : null,
        agent && tool === 'ask_help' ? helpAccountOf(this, ctx, agent.id) : null,
      ]);
      return ctx.call(action, ctx.params, { meta: tool === 'ask_help' ? { requestLogEntry, helpAccount } : { requestLogEntry } });
    },
  };
}

export const composedToolsMixin: Partial<ServiceSchemaOf<GatewayThis>> = {
  created() {
    this.reputationCache = new ReputationCache();
  },
  actions: {
    whoami: {
      params: toolParams('whoami'),
      async handler(this: GatewayThis, ctx: Context<Record<string, never>, CallMeta>) {
        const { id } = requireAgent(ctx);
        const now = Date.now();
        const cached = this.reputationCache.get(id, now);
        // The identity the key's authentication already loaded (the dispatcher hands it over), else agents'.
        const profile = ctx.meta.agentProfile;
        const mePromise = profile
          ? Promise.resolve({ agent: profile })
          : callAgents(ctx, AGENTS.whoami, ctx.params);
        const [me, balance, reputation, spendingLimits, evaluator] = await Promise.all([
          mePromise,
          callLedger(ctx, LEDGER.balance, { agentId: id }),
          cached ??
            callListings(ctx, LISTINGS.reputation, { sellerId: id }).then(
              (r) => {
                this.reputationCache.set(id, r, now);
                return r;
              },
              async (): Promise<SellerReputation> => {
                const isSeed = await mePromise.then((m) => !!m.agent.isSeed, () => false);
                return { salesCount: 0, evaluatedSalesCount: 0, ratingAvg: null, ratingCount: 0, accountAgeDays: 0, isSeed, unknown: true };
              },
            ),
          spendingLimitsOf(ctx, id),
          callEscrow(ctx, ESCROW.evaluatorReputation, { agentId: id }).catch(() => null),
        ]);
        return { agent: { ...me.agent, gasBalance: balance.gasBalance, reputation, evaluator, spendingLimits } };
      },
    },

    /**
     * get_agent: another agent's public record, for a buyer choosing an evaluator (or judging a seller): the
     * same reputation reads whoami makes, without what only the agent itself may see (balance, limits, label).
     */
    getAgent: {
      params: toolParams('get_agent'),
      async handler(this: GatewayThis, ctx: Context<{ agentId: string }, CallMeta>) {
        requireAgent(ctx);
        const { agentId } = ctx.params;
        // The agent first: an unknown id is not_found before listings is asked about it.
        // agents answers an unknown id as an unknown key (unauthorized): for a lookup it is simply not found.
        const agent = await callAgents(ctx, AGENTS.get, { agentId }).catch((err: { type?: unknown }) => {
          if (err.type === 'unauthorized') throw new NotFoundError(`No agent ${agentId}.`, { hint: 'Agent ids look like agt_…: take them from search_services (listing.seller.id) or from the agent itself.' });
          throw err;
        });
        const [reputation, evaluator] = await Promise.all([
          callListings(ctx, LISTINGS.reputation, { sellerId: agentId }),
          callEscrow(ctx, ESCROW.evaluatorReputation, { agentId }).catch(() => null),
        ]);
        return { agent: { id: agent.id, displayName: agent.displayName, isSeed: agent.isSeed, reputation, evaluator, createdAt: agent.createdAt } };
      },
    },

    wallet: {
      params: toolParams('wallet'),
      async handler(this: GatewayThis, ctx: Context<{ limit?: number; cursor?: string }, CallMeta>) {
        const { id: agentId } = requireAgent(ctx);
        const figures = await callLedger(ctx, LEDGER.walletFigures, { agentId, ...ctx.params });
        const [cashouts, spendingLimits] = await Promise.all([
          callPayments(ctx, PAYMENTS.listCashouts, { agentId }).catch(() => []),
          spendingLimitsOf(ctx, agentId),
        ]);
        return { ...figures, spendingLimits, cashouts };
      },
    },

    askHelp: withOwnRequest('ask_help', SUPPORT.askHelp),
    reportBug: withOwnRequest('report_bug', SUPPORT.reportBug),
  },
};
