/**
 * Payments over HTTP: the Stripe webhook (raw body, signature checked by payments), the sandbox
 * checkout page with its Approve/Decline forms (CSRF-checked), and the pages Stripe returns the
 * browser to. The pages themselves are in ../web/checkout.tsx.
 * Mounted before any JSON parser: express.raw is applied to the webhook route only.
 */
import express, { type Express, type Request, type Response } from 'express';
import type { GatewayDeps } from '../deps';
import { inRequestContext, logMappedError, sendError } from '../http';
import { redactPath } from '../redact';
import { toEnvelope } from '../../../packages/errors';
import { callPayments, PAYMENTS } from '../../../packages/contracts/payments';
import { CheckoutResultPage, PayCheckoutPage, SandboxCheckoutPage, statusSentence, type CheckoutContext } from '../web/checkout';
import { csrfToken, csrfValid } from '../web/csrf';
import { checkoutBrowserKey, readCheckoutBrowserKey, setOwnerCookie } from '../web/owner-cookie';
import { sendPage } from '../web/render';
import { limitsOutcome, parseLimitsForm, restrictsSpending } from '../web/limits';
import { callEscrow, ESCROW, type SpendingLimitsView } from '../../../packages/contracts/escrow';
import { callAgents, AGENTS } from '../../../packages/contracts/agents';

export const STRIPE_WEBHOOK_PATH = '/api/payments/stripe/webhook';

const formBody = inRequestContext(express.urlencoded({ extended: false, limit: '8kb' }));
const csrfPurpose = (sessionId: string) => `checkout:${sessionId}`;

export function registerPaymentsRoutes(app: Express, deps: GatewayDeps): void {
  const { broker } = deps;
  const ctx: CheckoutContext = { baseUrl: deps.config.publicBaseUrl, operatorContact: deps.config.operatorContact };
  const result = (res: Response, status: number, title: string, message: string, sessionId?: string) =>
    sendPage(res, status, CheckoutResultPage({ title, message, sessionId, ctx }));
  const htmlError = (res: Response, req: Request, err: unknown) => {
    const mapped = toEnvelope(err, req.requestId);
    const { status, body } = mapped;
    logMappedError(deps.broker.logger, mapped, err, { requestId: req.requestId, method: req.method, path: redactPath(req.path) });
    const msg = body.error.hint ? `${body.error.message} ${body.error.hint}` : body.error.message;
    result(res, status, status === 404 ? 'Checkout not found' : 'Checkout unavailable', msg);
  };
  /** A form POST without this browser's token for this checkout: refused before anything happens. */
  const refuseForgery = (req: Request, res: Response, id: string): boolean => {
    if (csrfValid(req, csrfPurpose(id))) return false;
    result(res, 403, 'Please use the checkout page', 'This form was not sent from the checkout page (its security token is missing or stale). Open the checkout link again and press the button there.', id);
    return true;
  };

  app.post(STRIPE_WEBHOOK_PATH, inRequestContext(express.raw({ type: () => true, limit: '1mb' })), async (req, res) => {
    try {
      const payload = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
      const result = await callPayments(broker, PAYMENTS.stripeWebhook, { payload, signature: req.get('stripe-signature') ?? undefined });
      res.json({ ok: true, result });
    } catch (err) {
      sendError(res, req, err);
    }
  });

  const sessionId = (req: Request) => String(req.params.sessionId ?? '').slice(0, 255);
  const checkoutAgent = async (id: string) => (await callPayments(broker, PAYMENTS.getCheckout, { sessionId: id })).agentId;
  /** A form POST of a checkout page: refused unless sent from that page; `handle` gets the session id; a failure is answered as a page. */
  const checkoutForm = (path: string, handle: (id: string, req: Request, res: Response) => Promise<void>) =>
    app.post(path, formBody, async (req, res) => {
      try {
        const id = sessionId(req);
        if (refuseForgery(req, res, id)) return;
        await handle(id, req, res);
      } catch (err) {
        htmlError(res, req, err);
      }
    });

  app.get('/checkout/sandbox/:sessionId', async (req, res) => {
    try {
      const s = await callPayments(broker, PAYMENTS.getCheckout, { sessionId: sessionId(req) });
      if (s.provider !== 'sandbox') {
        result(res, 404, 'Checkout not found', 'This is not a sandbox checkout session.');
        return;
      }
      const agent = await callAgents(broker, AGENTS.get, { agentId: s.agentId })
        .catch(() => ({ displayName: null }));
      const limits = await callEscrow(broker, ESCROW.limitsOf, { agentId: s.agentId }).catch(() => null);
      const csrf = csrfToken(req, res, csrfPurpose(s.id));
      sendPage(res, 200, SandboxCheckoutPage({ session: s, agent: { id: s.agentId, displayName: agent.displayName }, limits, csrf, ctx }));
    } catch (err) {
      htmlError(res, req, err);
    }
  });

  checkoutForm('/checkout/sandbox/:sessionId/approve', async (id, req, res) => {
    const limits = parseLimitsForm(req.body ?? {});
    const r = await callPayments(broker, PAYMENTS.sandboxApprove, { sessionId: id });
    if (!r.credited) {
      result(res, 409, 'Nothing to approve', statusSentence({ status: r.status, gas: r.gas }), id);
      return;
    }
    // The human who approved the payment sets the limits and gets the private owner link (once).
    // The gas is credited already: if escrow cannot answer now, say so rather than fail the page.
    let ownerUrl: string | undefined;
    let saved = '';
    try {
      const agentId = await checkoutAgent(id);
      if (limits) await callEscrow(broker, ESCROW.setLimits, { agentId, limits });
      const { token } = await callEscrow(broker, ESCROW.createOwnerLink, { agentId });
      ownerUrl = `${ctx.baseUrl}/owner/${token}`;
      setOwnerCookie(req, res, agentId, token);
      if (limits) saved = ` ${limitsOutcome(limits)}`;
    } catch (err) {
      deps.broker.logger.warn(`checkout ${redactPath(`/checkout/${id}`)}: limits/owner link not saved (${(err as Error).message})`);
      saved = limits ? ' Your spending limits could NOT be saved right now; set them when you approve the next checkout.' : '';
    }
    sendPage(res, 200, CheckoutResultPage({ title: 'Payment approved', message: `${r.gas} gas were added to the agent's balance.${saved}`, sessionId: id, ownerUrl, ctx }));
  });

  checkoutForm('/checkout/sandbox/:sessionId/decline', async (id, _req, res) => {
    const r = await callPayments(broker, PAYMENTS.sandboxDecline, { sessionId: id });
    if (r.declined) result(res, 200, 'Payment declined', 'Nothing was charged and no gas was added.', id);
    else result(res, 409, 'Nothing to decline', statusSentence({ status: r.status, gas: 0 }), id);
  });

  // Stripe sends the payer's browser here after payment, with the checkout's one-time claim secret in
  // the query (its success_url; see services/payments/stripe.ts ownerClaimSecret). Gas is never credited
  // from this page: it only asks payments to re-check the session with Stripe server-side (the webhook
  // usually got there first). The owner link goes, once, to the browser holding the claim secret of a
  // paid session: the payer, not the first browser that opened the checkout page (issue #39).
  app.get('/checkout/done', async (req, res) => {
    const id = typeof req.query.session_id === 'string' ? req.query.session_id.slice(0, 255) : '';
    const claim = typeof req.query.claim === 'string' ? req.query.claim.slice(0, 200) : '';
    let ownerUrl: string | undefined;
    let limits: SpendingLimitsView | undefined;
    let message = 'Your payment is being confirmed; the gas appears on the agent\'s balance within seconds.';
    if (id) {
      await callPayments(broker, PAYMENTS.reconcileSession, { sessionId: id }).catch(() => undefined);
      const s = await callPayments(broker, PAYMENTS.getCheckout, { sessionId: id, ...(claim ? { claim } : {}) }).catch(() => null);
      const paid = !!s && (s.status === 'paid' || s.status === 'completed');
      if (s && paid && s.claimValid) {
        const confirmed = `The payment is confirmed: ${s.gas} gas ${s.status === 'completed' ? 'were added' : 'are being added'} to the agent's balance.`;
        const browser = readCheckoutBrowserKey(req, id) ?? undefined;
        const claimed = await callEscrow(broker, ESCROW.claimCheckoutLimits, { sessionId: id, agentId: s.agentId, browser })
          .catch((err: Error) => {
            deps.broker.logger.warn(`checkout done ${redactPath(`/checkout/${id}`)}: owner link not issued (${err.message})`);
            return null;
          });
        if (!claimed) {
          message = `${confirmed} Your private owner link could not be made right now: keep this page and reload it in a minute to get it.`;
        } else if (claimed.ownerToken) {
          ownerUrl = `${ctx.baseUrl}/owner/${claimed.ownerToken}`;
          setOwnerCookie(req, res, s.agentId, claimed.ownerToken);
          limits = await callEscrow(broker, ESCROW.limitsOf, { agentId: s.agentId }).catch(() => undefined);
          const applied = !claimed.limitsApplied
            ? 'The agent\'s spending limits are unchanged.'
            : limits && !restrictsSpending(limits)
              ? 'No spending limits are set: the agent may spend its whole balance.'
              : 'The spending limits you set before paying are now in force.';
          message = `${confirmed} ${applied} You change them on your private owner page below.`;
        } else {
          message = `${confirmed} The private owner link of this payment was already shown, on the first visit of this page, and is never shown twice. If that was not you, the link may have leaked: tell the operator.`;
        }
      } else if (s && paid) {
        message = 'The payment is confirmed; the gas is on the agent\'s balance. The private owner link and the spending limits of this checkout go only to the person who paid, on the page Stripe returned them to after paying: this visit gets no owner link and changes nothing.';
      } else if (s && (s.status === 'expired' || s.status === 'declined')) {
        message = statusSentence(s);
      } else if (s?.claimValid && s.status === 'open') {
        message = 'Your payment is being confirmed; the gas appears on the agent\'s balance within seconds. Keep this page and reload it in a minute: your private owner link appears here once the payment is confirmed, and your spending limits apply from then.';
      }
    }
    sendPage(res, 200, CheckoutResultPage({ title: 'Thank you', message, ownerUrl, limits, ctx }));
  });

  app.get('/checkout/cancelled', (_req, res) => {
    result(res, 200, 'Checkout cancelled', 'Nothing was charged and no gas was added.');
  });

  // The service's own page before a Stripe payment: the limit fields, then on to Stripe's hosted page.
  app.get('/checkout/:sessionId', async (req, res) => {
    try {
      const s = await callPayments(broker, PAYMENTS.getCheckout, { sessionId: sessionId(req) });
      if (s.provider !== 'stripe') {
        res.redirect(303, `/checkout/sandbox/${encodeURIComponent(s.id)}`);
        return;
      }
      const [agent, limits] = await Promise.all([
        callAgents(broker, AGENTS.get, { agentId: s.agentId }).catch(() => ({ displayName: null })),
        callEscrow(broker, ESCROW.limitsOf, { agentId: s.agentId }).catch(() => null),
      ]);
      const csrf = csrfToken(req, res, csrfPurpose(s.id));
      // "Continue to payment" is answered with a redirect to Stripe's hosted page: CSP form-action must allow its origin.
      const stripeOrigin = (() => {
        try {
          return s.status === 'open' ? [new URL(s.checkoutUrl).origin] : [];
        } catch {
          return [];
        }
      })();
      sendPage(res, 200, PayCheckoutPage({ session: s, agent: { id: s.agentId, displayName: agent.displayName }, limits, csrf, ctx }), { formTargets: stripeOrigin });
    } catch (err) {
      htmlError(res, req, err);
    }
  });

  checkoutForm('/checkout/:sessionId/continue', async (id, req, res) => {
    const s = await callPayments(broker, PAYMENTS.getCheckout, { sessionId: id });
    if (s.provider !== 'stripe' || s.status !== 'open') {
      result(res, 409, 'Nothing to pay', statusSentence({ status: s.status, gas: s.gas }), undefined);
      return;
    }
    const limits = parseLimitsForm(req.body ?? {});
    // The first browser to submit this page owns it: only its limits are staged, and they apply only if it is also
    // the browser that pays (the owner link goes to the payer: /checkout/done).
    const staged = await callEscrow(broker, ESCROW.stageCheckoutLimits, { sessionId: id, agentId: s.agentId, limits, browser: checkoutBrowserKey(req, res, id) });
    if (!staged.staged) {
      result(res, 409, 'Another browser is paying this checkout',
        'Another browser already filled in this checkout page and went on to payment. Nothing was changed. If that was not you, do not pay this checkout: ask your agent to call buy_gas again and open the new link yourself before anyone else.');
      return;
    }
    res.redirect(303, s.checkoutUrl);
  });
}
