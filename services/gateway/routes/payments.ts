/**
 * Payments over HTTP: the Stripe webhook (raw body, signature checked by payments), the sandbox
 * checkout page with its Approve/Decline forms, and the pages Stripe returns the browser to.
 * Mounted before any JSON parser: express.raw is applied to the webhook route only.
 */
import express, { type Express, type Request, type Response } from 'express';
import type { GatewayDeps } from '../app';
import { sendError } from '../http';
import { toEnvelope } from '../../../packages/errors';
import type { CheckoutView, FulfilResult } from '../../payments/payments.service';
import { resultPage, sandboxCheckoutPage, statusSentence } from '../../payments/checkout-page';

export const STRIPE_WEBHOOK_PATH = '/api/payments/stripe/webhook';

const HTML_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

function sendHtml(res: Response, status: number, html: string): void {
  res.status(status).set(HTML_HEADERS).send(html);
}

function sendHtmlError(res: Response, req: Request, err: unknown): void {
  const { status, body } = toEnvelope(err, req.requestId);
  const msg = body.error.hint ? `${body.error.message} ${body.error.hint}` : body.error.message;
  sendHtml(res, status, resultPage(status === 404 ? 'Checkout not found' : 'Checkout unavailable', msg));
}

export function registerPaymentsRoutes(app: Express, deps: GatewayDeps): void {
  const { broker } = deps;

  app.post(STRIPE_WEBHOOK_PATH, express.raw({ type: () => true, limit: '1mb' }), async (req, res) => {
    try {
      const payload = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
      const result = await broker.call('payments.stripeWebhook', { payload, signature: req.get('stripe-signature') ?? undefined });
      res.json({ ok: true, result });
    } catch (err) {
      sendError(res, req, err);
    }
  });

  const sessionId = (req: Request) => String(req.params.sessionId ?? '').slice(0, 255);

  app.get('/checkout/sandbox/:sessionId', async (req, res) => {
    try {
      const s = await broker.call<CheckoutView, { sessionId: string }>('payments.getCheckout', { sessionId: sessionId(req) });
      if (s.provider !== 'sandbox') {
        sendHtml(res, 404, resultPage('Checkout not found', 'This is not a sandbox checkout session.'));
        return;
      }
      const agent = await broker
        .call<{ displayName: string }, { agentId: string }>('agents.get', { agentId: s.agentId })
        .catch(() => ({ displayName: 'your agent' }));
      sendHtml(res, 200, sandboxCheckoutPage(s, agent.displayName));
    } catch (err) {
      sendHtmlError(res, req, err);
    }
  });

  app.post('/checkout/sandbox/:sessionId/approve', async (req, res) => {
    try {
      const id = sessionId(req);
      const r = await broker.call<FulfilResult, { sessionId: string }>('payments.sandboxApprove', { sessionId: id });
      if (r.credited) {
        sendHtml(res, 200, resultPage('Payment approved', `${r.gas} gas were added to the agent's balance.`, id));
      } else {
        sendHtml(res, 409, resultPage('Nothing to approve', statusSentence({ status: r.status, gas: r.gas }), id));
      }
    } catch (err) {
      sendHtmlError(res, req, err);
    }
  });

  app.post('/checkout/sandbox/:sessionId/decline', async (req, res) => {
    try {
      const id = sessionId(req);
      const r = await broker.call<{ declined: boolean; status: CheckoutView['status'] }, { sessionId: string }>('payments.sandboxDecline', { sessionId: id });
      if (r.declined) sendHtml(res, 200, resultPage('Payment declined', 'Nothing was charged and no gas was added.', id));
      else sendHtml(res, 409, resultPage('Nothing to decline', statusSentence({ status: r.status, gas: 0 }), id));
    } catch (err) {
      sendHtmlError(res, req, err);
    }
  });

  // Stripe sends the browser here after payment. Gas is never credited from this page: it only asks
  // payments to re-check the session with Stripe server-side (the webhook usually got there first).
  app.get('/checkout/done', async (req, res) => {
    const id = typeof req.query.session_id === 'string' ? req.query.session_id.slice(0, 255) : '';
    if (id) await broker.call('payments.reconcileSession', { sessionId: id }).catch(() => undefined);
    sendHtml(res, 200, resultPage('Thank you', 'Your payment is being confirmed; the gas appears on the agent\'s balance within seconds.'));
  });

  app.get('/checkout/cancelled', (_req, res) => {
    sendHtml(res, 200, resultPage('Checkout cancelled', 'Nothing was charged and no gas was added.'));
  });
}
