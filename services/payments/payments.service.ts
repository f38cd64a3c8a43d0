/**
 * payments: gas packs and checkout. With STRIPE_SECRET_KEY a Stripe Checkout Session, fulfilled by the
 * signed webhook or by reconciliation (agent polls, periodic sweeper); without it the built-in sandbox
 * checkout page (development only). Every path credits through fulfil(): the session moves
 * open → paid → completed and the ledger credit is keyed checkout:<sessionId>, so gas is credited once.
 * Payouts (cash-out) come from payouts.ts.
 */
import type { Context, Service } from 'moleculer';
import { dbMixin, type DbService } from '../../packages/db/mixin';
import { rowView } from '../../packages/db/row-view';
import { toolParams } from '../../packages/tool-catalogue';
import { requireAgent, type CallMeta } from '../../packages/tool-catalogue/meta';
import { InvalidArgumentsError, MarketError, NotFoundError } from '../../packages/errors';
import { newId } from '../../packages/ids';
import type { RuntimeService, ServiceSchemaOf } from '../../packages/runtime';
import { DEFAULT_PACK_ID, GAS_PACKS, GAS_PER_USD, packById } from '../../packages/market-rules';
import { payoutsMixin } from './payouts';
import { migrations } from './migrations';
import { createStripeClient, ownerClaimMatches, ownerClaimSecret, sha256Hex, verifyStripeEvent, type StripeCheckoutSession, type StripeClient, type StripeEvent } from './stripe';
import { callLedger, LEDGER } from '../../packages/contracts/ledger';
import { enqueueEvent, startRelay, type OutboxRelay } from '../../packages/outbox';
import { PAYMENTS_TOPICS, type CheckoutRecord, type CheckoutStatus, type CheckoutView, type FulfilResult, type GasCredited } from '../../packages/contracts/payments';
import type { RecordQuery } from '../../packages/contracts/ledger';
import { isoOrNull, recordPage, RECORD_QUERY_PARAMS } from '../../packages/ledger-audit/records';

export const SANDBOX_SESSION_TTL_MS = 24 * 3_600_000;
export interface CheckoutRow {
  id: string;
  provider: 'sandbox' | 'stripe';
  agent_id: string;
  pack_id: string;
  gas: number;
  usd_cents: number;
  status: CheckoutStatus;
  checkout_url: string;
  expires_at: Date;
  created_at: Date;
  paid_at: Date | null;
  completed_at: Date | null;
  /** Stripe: sha256 of the owner-claim secret in the session's success_url (./stripe.ts ownerClaimSecret). */
  owner_claim_sha256: string | null;
}

/** How many open sessions one wallet/whoami poll re-checks. */
const RECONCILE_PER_POLL = 10;

/**
 * The link the agent hands its human: the sandbox page, or for Stripe this service's own page (pack,
 * agent, spending-limit fields) that continues to Stripe's hosted page (kept in checkout_url).
 */
export function humanCheckoutUrl(baseUrl: string, r: Pick<CheckoutRow, 'id' | 'provider' | 'checkout_url'>): string {
  return r.provider === 'stripe' ? `${baseUrl}/checkout/${encodeURIComponent(r.id)}` : r.checkout_url;
}

/** A checkout as its buyer sees it (get_checkout): the buy_gas fields plus its state. */
function checkoutOfBuyer(r: CheckoutRow, baseUrl: string) {
  return {
    sessionId: r.id,
    checkoutUrl: humanCheckoutUrl(baseUrl, r),
    packId: r.pack_id,
    gas: r.gas,
    usd: r.usd_cents / 100,
    status: r.status,
    expiresAt: new Date(r.expires_at).toISOString(),
    createdAt: new Date(r.created_at).toISOString(),
  };
}

function toView(r: CheckoutRow): CheckoutView {
  return {
    ...rowView(r, ['id', 'provider', 'agent_id', 'pack_id', 'gas', 'status', 'checkout_url', 'expires_at', 'created_at', 'completed_at']),
    usd: r.usd_cents / 100,
  };
}

function packList(): string {
  return GAS_PACKS.map((p) => `${p.id} (${p.gas} gas, ${p.usd} USD)`).join(', ');
}

const SESSION_ID = { type: 'string', min: 3, max: 255 } as const;

const PaymentsService: ServiceSchemaOf<PaymentsThis> = {
  name: 'payments',
  mixins: [dbMixin('payments', migrations), payoutsMixin],

  actions: {
    /** buy_gas and buy_credits. */
    buyGas: {
      params: toolParams('buy_gas'),
      async handler(this: PaymentsThis, ctx: Context<{ packId?: string }, CallMeta>) {
        const agent = requireAgent(ctx);
        const packId = ctx.params.packId ?? DEFAULT_PACK_ID;
        const pack = packById(packId);
        if (!pack) {
          throw new InvalidArgumentsError(`There is no gas pack "${String(packId).slice(0, 32)}".`, {
            hint: `Use one of: ${packList()}. Leave packId out for ${DEFAULT_PACK_ID}.`,
            details: { field: 'packId', packs: GAS_PACKS.map((p) => ({ packId: p.id, gas: p.gas, usd: p.usd })) },
          });
        }
        const { config, clock } = this;
        const usdCents = pack.usd * 100;
        if (usdCents !== pack.gas * (100 / GAS_PER_USD)) throw new Error(`pack ${pack.id} breaks the gas peg`);
        const now = clock.now();
        let id: string;
        let checkoutUrl: string;
        let expiresAt: Date;
        let provider: CheckoutRow['provider'];
        let ownerClaimSha256: string | null = null;
        if (this.stripe) {
          const requestOptions = ctx.meta.idempotencyKey ? { idempotencyKey: `buy_gas:${agent.id}:${ctx.meta.idempotencyKey}`.slice(0, 255) } : undefined;
          // Only the payer's browser is sent to success_url: the owner link is claimed with this secret (issue #39).
          const claim = ownerClaimSecret(config.stripeSecretKey!, requestOptions?.idempotencyKey);
          ownerClaimSha256 = sha256Hex(claim);
          const session = await this.stripe.checkout.sessions
            .create(
              {
                mode: 'payment',
                client_reference_id: agent.id,
                metadata: { agentId: agent.id, packId: pack.id, gas: String(pack.gas) },
                line_items: [
                  {
                    quantity: 1,
                    price_data: {
                      currency: 'usd',
                      unit_amount: usdCents,
                      product_data: { name: `${pack.gas} gas (${pack.id} pack)`, description: `${pack.gas} gas for the agent ${agent.displayName}` },
                    },
                  },
                ],
                success_url: `${config.publicBaseUrl}/checkout/done?session_id={CHECKOUT_SESSION_ID}&claim=${claim}`,
                cancel_url: `${config.publicBaseUrl}/checkout/cancelled`,
              },
              requestOptions,
            )
            .catch((err: Error) => {
              this.logger.error(`stripe: creating a checkout session failed: ${err.message}`);
              throw new MarketError('service_unavailable', 'The card checkout could not be started right now; nothing was charged.', {
                hint: 'Retry buy_gas in a few seconds (send an Idempotency-Key so a retry never opens two checkouts).',
                retryAfterSeconds: 5,
              });
            });
          if (!session.url) throw new Error(`Stripe returned no checkout url for ${session.id}`);
          id = session.id;
          checkoutUrl = session.url;
          expiresAt = new Date(session.expires_at * 1000);
          provider = 'stripe';
        } else {
          this.refuseSandboxInProduction();
          id = newId('cko');
          checkoutUrl = `${config.publicBaseUrl}/checkout/sandbox/${id}`;
          expiresAt = new Date(now.getTime() + SANDBOX_SESSION_TTL_MS);
          provider = 'sandbox';
        }
        await this.db.query(
          `INSERT INTO payments.checkout_sessions (id, provider, agent_id, pack_id, gas, usd_cents, status, checkout_url, expires_at, created_at, owner_claim_sha256)
           VALUES ($1, $2, $3, $4, $5, $6, 'open', $7, $8, $9, $10) ON CONFLICT (id) DO NOTHING`,
          [id, provider, agent.id, pack.id, pack.gas, usdCents, checkoutUrl, expiresAt, now, ownerClaimSha256],
        );
        return { checkoutUrl: humanCheckoutUrl(config.publicBaseUrl, { id, provider, checkout_url: checkoutUrl }), sessionId: id, packId: pack.id, gas: pack.gas, usd: pack.usd, expiresAt: expiresAt.toISOString() };
      },
    },

    /** get_checkout: the caller's open checkouts (or one of its checkouts), so a lost checkoutUrl is never lost. */
    listCheckouts: {
      params: toolParams('get_checkout'),
      async handler(this: PaymentsThis, ctx: Context<{ sessionId?: string }, CallMeta>) {
        const agent = requireAgent(ctx);
        if (ctx.params.sessionId) {
          const row = await this.loadSession(ctx.params.sessionId);
          if (!row || row.agent_id !== agent.id) {
            throw new NotFoundError('You have no checkout with this sessionId.', { hint: 'Call get_checkout without sessionId to list your open checkouts, or start one with buy_gas.' });
          }
          return { checkouts: [checkoutOfBuyer(await this.expireIfDue(row), this.config.publicBaseUrl)] };
        }
        const r = await this.db.query<CheckoutRow>(
          `SELECT * FROM payments.checkout_sessions WHERE agent_id = $1 AND status = 'open' AND expires_at > $2 ORDER BY created_at DESC LIMIT 20`,
          [agent.id, this.clock.now()],
        );
        return { checkouts: r.rows.map((row) => checkoutOfBuyer(row, this.config.publicBaseUrl)) };
      },
    },

    /** The reconciling audit's page of checkouts (agent, gas, status, paid at); `ids` are session ids. Reads only. */
    checkoutRecords: {
      params: RECORD_QUERY_PARAMS,
      async handler(this: PaymentsThis, ctx: Context<RecordQuery>) {
        return recordPage<CheckoutRow, CheckoutRecord>(
          this.db,
          { select: 'SELECT * FROM payments.checkout_sessions WHERE true', key: 'id', order: 'id', pageFilter: 'status = ANY($2::text[])' },
          ctx.params,
          (r) => ({ sessionId: r.id, agentId: r.agent_id, packId: r.pack_id, gas: Number(r.gas), status: r.status, paidAt: isoOrNull(r.paid_at), createdAt: isoOrNull(r.created_at)! }),
          this.clock.now(),
        );
      },
    },

    /**
     * Internal: one checkout session (the checkout pages). With `claim` (the return page's), also whether it
     * is this session's owner-claim secret, i.e. whether the browser holding it is the one Stripe sent back.
     */
    getCheckout: {
      params: { sessionId: SESSION_ID, claim: { type: 'string', optional: true, max: 200 } },
      async handler(this: PaymentsThis, ctx: Context<{ sessionId: string; claim?: string }>): Promise<CheckoutView> {
        const row = await this.loadSession(ctx.params.sessionId);
        if (!row) throw new NotFoundError('No such checkout session.', { hint: 'Start a new one with buy_gas.' });
        const view = toView(await this.expireIfDue(row));
        return ctx.params.claim === undefined ? view : { ...view, claimValid: ownerClaimMatches(row.owner_claim_sha256, ctx.params.claim) };
      },
    },

    /** Sandbox Approve button: credits through the same path as a paid Stripe webhook. */
    sandboxApprove: {
      params: { sessionId: SESSION_ID },
      async handler(this: PaymentsThis, ctx: Context<{ sessionId: string }>) {
        const row = await this.sandboxSession(ctx.params.sessionId);
        if (row.status === 'open' || row.status === 'paid') return this.fulfil(row.id, ['open']);
        return { sessionId: row.id, credited: false, status: row.status, gas: row.gas } satisfies FulfilResult;
      },
    },

    /** Sandbox Decline button: the session ends, nothing is credited. */
    sandboxDecline: {
      params: { sessionId: SESSION_ID },
      async handler(this: PaymentsThis, ctx: Context<{ sessionId: string }>) {
        const row = await this.sandboxSession(ctx.params.sessionId);
        const r = await this.db.query<CheckoutRow>(
          `UPDATE payments.checkout_sessions SET status = 'declined' WHERE id = $1 AND status = 'open' RETURNING *`,
          [row.id],
        );
        const now = r.rows[0] ?? (await this.loadSession(row.id))!;
        return { sessionId: row.id, declined: r.rowCount === 1, status: now.status };
      },
    },

    /** The Stripe webhook (the gateway passes the raw body and the Stripe-Signature header). */
    stripeWebhook: {
      params: { payload: { type: 'string', max: 1_000_000 }, signature: { type: 'string', optional: true, max: 2000 } },
      async handler(this: PaymentsThis, ctx: Context<{ payload: string; signature?: string }>) {
        const { config } = this;
        if (!config.stripeWebhookSecret) {
          throw new InvalidArgumentsError('Stripe webhooks are not configured on this server; nothing was credited.', {
            hint: 'Set STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET on the server, and point the Stripe endpoint at /api/payments/stripe/webhook.',
          });
        }
        let event: StripeEvent;
        try {
          if (!ctx.params.signature) throw new Error('missing Stripe-Signature header');
          event = verifyStripeEvent(ctx.params.payload, ctx.params.signature, config.stripeWebhookSecret);
        } catch (err) {
          throw new InvalidArgumentsError('The webhook signature could not be verified; nothing was credited.', {
            hint: 'Stripe signs the raw request body with the endpoint secret (STRIPE_WEBHOOK_SECRET); send it unmodified with its Stripe-Signature header.',
            details: { reason: String((err as Error).message).slice(0, 200) },
          });
        }
        if (!event || typeof event.id !== 'string' || typeof event.type !== 'string' || typeof event.data?.object !== 'object') {
          throw new InvalidArgumentsError('The webhook body is not a Stripe event; nothing was credited.', { hint: 'Send Stripe events only.' });
        }
        const outcome = await this.handleStripeEvent(event);
        await this.db
          .query(
            `INSERT INTO payments.stripe_events (event_id, type, session_id, outcome) VALUES ($1, $2, $3, $4) ON CONFLICT (event_id) DO NOTHING`,
            [event.id, event.type, outcome.sessionId ?? null, outcome.outcome],
          )
          .catch(() => undefined);
        return { received: true, ...outcome };
      },
    },

    /** Re-checks the agent's open checkout sessions (operators and tests; reads such as wallet never do). */
    reconcileAgent: {
      params: { agentId: { type: 'string', min: 3, max: 100 } },
      async handler(this: PaymentsThis, ctx: Context<{ agentId: string }>) {
        const r = await this.db.query<CheckoutRow>(
          `SELECT * FROM payments.checkout_sessions WHERE agent_id = $1 AND status IN ('open', 'paid') ORDER BY created_at DESC LIMIT $2`,
          [ctx.params.agentId, RECONCILE_PER_POLL],
        );
        let credited = 0;
        for (const row of r.rows) {
          const res = await this.reconcileRow(row).catch((err: Error) => {
            this.logger.warn(`reconcile ${row.id} failed: ${err.message}`);
            return null;
          });
          if (res?.credited) credited++;
        }
        return { checked: r.rows.length, credited };
      },
    },

    /** Re-checks one session (the Stripe success page asks this server-side; never trusts the browser). */
    reconcileSession: {
      params: { sessionId: SESSION_ID },
      async handler(this: PaymentsThis, ctx: Context<{ sessionId: string }>) {
        const row = await this.loadSession(ctx.params.sessionId);
        if (!row) throw new NotFoundError('No such checkout session.', { hint: 'Start a new one with buy_gas.' });
        const res = await this.reconcileRow(row);
        return { sessionId: row.id, credited: res.credited, status: res.status };
      },
    },

    /** Runs the reconciliation sweeper once (tests, operators). */
    sweepCheckouts: {
      async handler(this: PaymentsThis) {
        return this.sweepCheckouts();
      },
    },
  },

  methods: {
    refuseSandboxInProduction(this: PaymentsThis) {
      if (this.config.nodeEnv === 'production') {
        throw new MarketError('service_unavailable', 'The sandbox checkout is disabled in production.', {
          hint: 'The operator must set STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET.',
        });
      }
    },

    async loadSession(this: PaymentsThis, id: string): Promise<CheckoutRow | null> {
      const r = await this.db.query<CheckoutRow>('SELECT * FROM payments.checkout_sessions WHERE id = $1', [id]);
      return r.rows[0] ?? null;
    },

    async sandboxSession(this: PaymentsThis, id: string): Promise<CheckoutRow> {
      this.refuseSandboxInProduction();
      const row = await this.loadSession(id);
      if (!row || row.provider !== 'sandbox') throw new NotFoundError('No such sandbox checkout session.', { hint: 'Start a new one with buy_gas.' });
      return this.expireIfDue(row);
    },

    /** A sandbox session past its expiry ends as expired (Stripe sessions expire at Stripe). */
    async expireIfDue(this: PaymentsThis, row: CheckoutRow): Promise<CheckoutRow> {
      if (row.provider !== 'sandbox' || row.status !== 'open') return row;
      if (new Date(row.expires_at).getTime() > this.clock.now().getTime()) return row;
      const r = await this.db.query<CheckoutRow>(
        `UPDATE payments.checkout_sessions SET status = 'expired' WHERE id = $1 AND status = 'open' RETURNING *`,
        [row.id],
      );
      return r.rows[0] ?? (await this.loadSession(row.id))!;
    },

    /**
     * The one crediting path. Moves the session to paid (from one of `from`), asks the ledger to
     * credit under checkout:<id> (idempotent), then marks it completed. A crash between the steps
     * leaves it paid, and the next reconciliation finishes the credit — once.
     */
    async fulfil(this: PaymentsThis, sessionId: string, from: CheckoutRow['status'][]): Promise<FulfilResult> {
      const now = this.clock.now();
      const claimed = await this.db.query<CheckoutRow>(
        `UPDATE payments.checkout_sessions SET status = 'paid', paid_at = $2 WHERE id = $1 AND status = ANY($3::text[]) RETURNING *`,
        [sessionId, now, from],
      );
      const row = claimed.rows[0] ?? (await this.loadSession(sessionId));
      if (!row) throw new NotFoundError('No such checkout session.');
      if (row.status !== 'paid') return { sessionId, credited: false, status: row.status, gas: row.gas };
      const credit = await callLedger(this.broker, LEDGER.creditGasPurchase, {
        key: `checkout:${row.id}`,
        agentId: row.agent_id,
        gas: row.gas,
        sessionId: row.id,
        packId: row.pack_id,
      });
      // The agent's webhook (gas.credited) is told once: in the transaction that completes the session.
      const completed = await this.db.transaction(async (tx) => {
        const u = await tx.query(
          `UPDATE payments.checkout_sessions SET status = 'completed', completed_at = $2, ledger_transaction_id = $3 WHERE id = $1 AND status = 'paid'`,
          [row.id, now, credit.transactionId],
        );
        if (u.rowCount === 1) {
          const fact: GasCredited = { agentId: row.agent_id, sessionId: row.id, packId: row.pack_id, gas: row.gas, gasBalance: credit.gasBalance, at: now.toISOString() };
          await enqueueEvent(tx, 'payments', PAYMENTS_TOPICS.gasCredited, fact);
        }
        return u.rowCount === 1;
      });
      if (completed) await this.relay.wake();
      return { sessionId, credited: !credit.replayed, status: 'completed', gas: row.gas, gasBalance: credit.gasBalance };
    },

    /** A Stripe session is paid when Stripe says so and it is the session we created (amount, currency, agent). */
    stripeSessionPaid(this: PaymentsThis, row: CheckoutRow, session: StripeCheckoutSession | null | undefined): boolean {
      const paid = session?.payment_status === 'paid' || session?.payment_status === 'no_payment_required';
      if (!session || !paid || session.status !== 'complete') return false;
      const matches =
        session.amount_total === row.usd_cents &&
        String(session.currency).toLowerCase() === 'usd' &&
        (session.client_reference_id ?? session.metadata?.agentId) === row.agent_id;
      if (!matches) {
        this.logger.error(`stripe session ${row.id} is paid but does not match what we created; not credited`, {
          amount_total: session.amount_total,
          currency: session.currency,
          client_reference_id: session.client_reference_id,
        });
        return false;
      }
      return true;
    },

    async handleStripeEvent(this: PaymentsThis, event: StripeEvent): Promise<{ outcome: string; sessionId?: string; credited?: boolean }> {
      const type: string = event.type;
      if (!type.startsWith('checkout.session.')) return { outcome: 'ignored' };
      const session = event.data.object as StripeCheckoutSession | null;
      const sessionId = typeof session?.id === 'string' ? session.id : undefined;
      const row = sessionId ? await this.loadSession(sessionId) : null;
      if (!row || row.provider !== 'stripe') return { outcome: 'unknown_session', sessionId };
      switch (type) {
        case 'checkout.session.completed':
        case 'checkout.session.async_payment_succeeded': {
          if (!this.stripeSessionPaid(row, session)) return { outcome: 'not_paid', sessionId };
          const res = await this.fulfil(row.id, ['open', 'expired']);
          return { outcome: res.credited ? 'credited' : 'already_credited', sessionId, credited: res.credited };
        }
        case 'checkout.session.expired':
        case 'checkout.session.async_payment_failed': {
          await this.db.query(`UPDATE payments.checkout_sessions SET status = 'expired' WHERE id = $1 AND status = 'open'`, [row.id]);
          return { outcome: 'expired', sessionId };
        }
        default:
          return { outcome: 'ignored', sessionId };
      }
    },

    /** Brings one open/paid session up to date: finish a credit, ask Stripe, or expire a sandbox session. */
    async reconcileRow(this: PaymentsThis, row: CheckoutRow): Promise<{ credited: boolean; status: CheckoutRow['status'] }> {
      if (row.status === 'paid') {
        const res = await this.fulfil(row.id, []);
        return { credited: res.credited, status: res.status };
      }
      if (row.status !== 'open') return { credited: false, status: row.status };
      if (row.provider === 'sandbox') {
        const now = await this.expireIfDue(row);
        return { credited: false, status: now.status };
      }
      if (!this.stripe) return { credited: false, status: row.status };
      const session = await this.stripe.checkout.sessions.retrieve(row.id);
      if (this.stripeSessionPaid(row, session)) {
        const res = await this.fulfil(row.id, ['open', 'expired']);
        return { credited: res.credited, status: res.status };
      }
      if (session.status === 'expired') {
        await this.db.query(`UPDATE payments.checkout_sessions SET status = 'expired' WHERE id = $1 AND status = 'open'`, [row.id]);
        return { credited: false, status: 'expired' };
      }
      return { credited: false, status: row.status };
    },

    /** Periodic: re-check sessions still open or paid; a lease (checked_at) spreads the work over replicas. */
    async sweepCheckouts(this: PaymentsThis): Promise<{ checked: number; credited: number }> {
      const r = await this.db.query<CheckoutRow>(
        `UPDATE payments.checkout_sessions SET checked_at = now()
          WHERE id IN (
            SELECT id FROM payments.checkout_sessions
             WHERE status IN ('open', 'paid') AND (checked_at IS NULL OR checked_at < now() - interval '30 seconds')
             ORDER BY created_at LIMIT 50 FOR UPDATE SKIP LOCKED)
          RETURNING *`,
      );
      let credited = 0;
      for (const row of r.rows) {
        const res = await this.reconcileRow(row).catch((err: Error) => {
          this.logger.warn(`sweep: reconcile ${row.id} failed: ${err.message}`);
          return null;
        });
        if (res?.credited) credited++;
      }
      return { checked: r.rows.length, credited };
    },
  },

  async started(this: PaymentsThis) {
    const { config } = this;
    this.stripe = createStripeClient(config);
    this.relay = startRelay(this.broker, this.db, config.sweepIntervalMs);
    if (!this.stripe && config.nodeEnv === 'production') {
      throw new Error('payments: NODE_ENV=production needs STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET (the sandbox checkout is for development only)');
    }
    if (config.sweepIntervalMs > 0) {
      this.sweepTimer = setInterval(() => {
        if (this.sweeping) return;
        this.sweeping = this.sweepCheckouts()
          .catch((err: Error) => this.logger.warn(`checkout sweep failed: ${err.message}`))
          .finally(() => (this.sweeping = null));
      }, config.sweepIntervalMs);
      this.sweepTimer.unref();
    }
  },

  async stopped(this: PaymentsThis) {
    clearInterval(this.sweepTimer ?? undefined);
    await this.sweeping;
    await this.relay?.stop();
  },
};

type PaymentsThis = Service & RuntimeService & DbService & {
  stripe: StripeClient | null;
  relay: OutboxRelay;
  sweepTimer: NodeJS.Timeout | null;
  sweeping: Promise<unknown> | null;
  refuseSandboxInProduction(): void;
  loadSession(id: string): Promise<CheckoutRow | null>;
  sandboxSession(id: string): Promise<CheckoutRow>;
  expireIfDue(row: CheckoutRow): Promise<CheckoutRow>;
  fulfil(sessionId: string, from: CheckoutRow['status'][]): Promise<FulfilResult>;
  stripeSessionPaid(row: CheckoutRow, session: StripeCheckoutSession | null | undefined): boolean;
  handleStripeEvent(event: StripeEvent): Promise<{ outcome: string; sessionId?: string; credited?: boolean }>;
  reconcileRow(row: CheckoutRow): Promise<{ credited: boolean; status: CheckoutRow['status'] }>;
  sweepCheckouts(): Promise<{ checked: number; credited: number }>;
};

export default PaymentsService;
