/**
 * The human's pages behind private links: the owner page (/owner/<token>: balance, spending against
 * the limits, recent purchases, the limit form, revoke) and the approval page of a purchase above
 * the "ask me above" amount (/approve/<token>), which only the owner's browser (the owner cookie, see
 * ../web/owner-cookie.ts) can answer. Every form is CSRF-checked; escrow owns the data.
 */
import express, { type Express, type Request, type Response } from 'express';
import type { GatewayDeps } from '../deps';
import { toEnvelope } from '../../../packages/errors';
import { inRequestContext, logMappedError } from '../http';
import { redactPath } from '../redact';
import { callAgents, AGENTS } from '../../../packages/contracts/agents';
import { callEscrow, ESCROW } from '../../../packages/contracts/escrow';

import { callLedger, LEDGER } from '../../../packages/contracts/ledger';
import { csrfToken, csrfValid } from '../web/csrf';
import { readOwnerCookie, setOwnerCookie } from '../web/owner-cookie';
import { ApprovalPage, approvalOutcome, approvalTokenOf, OWNER_COOKIE_MISSING, OwnerPage, parseLimitsForm } from '../web/limits';
import { MessagePage, sendPage } from '../web/render';

const formBody = inRequestContext(express.urlencoded({ extended: false, limit: '8kb' }));
const tokenOf = (req: Request) => String(req.params.token ?? '').slice(0, 100);

export function registerOwnerRoutes(app: Express, deps: GatewayDeps): void {
  const { broker } = deps;
  const message = (res: Response, status: number, title: string, text: string) => sendPage(res, status, MessagePage({ title, message: text }));
  const htmlError = (res: Response, req: Request, err: unknown, title: string) => {
    const mapped = toEnvelope(err, req.requestId);
    const { status, body } = mapped;
    // A 5xx is logged like the API's (sendError), with the token in the path redacted.
    logMappedError(deps.broker.logger, mapped, err, { requestId: req.requestId, method: req.method, path: redactPath(req.path) });
    message(res, status, title, body.error.hint ? `${body.error.message} ${body.error.hint}` : body.error.message);
  };
  /**
   * A form POST of a page behind a private link: the form must come from its page (the CSRF token of
   * `purpose:token`); `handle` gets the link's token; anything thrown is answered as a page titled `failed`.
   */
  const tokenForm = (path: string, purpose: 'owner' | 'approval', failed: string, handle: (token: string, req: Request, res: Response) => Promise<void>) =>
    app.post(path, formBody, async (req, res) => {
      try {
        const token = tokenOf(req);
        if (!csrfValid(req, `${purpose}:${token}`)) {
          message(res, 403, 'Please use the page', 'This form was not sent from its page (its security token is missing or stale). Open the link again and press the button there.');
          return;
        }
        await handle(token, req, res);
      } catch (err) {
        htmlError(res, req, err, failed);
      }
    });
  /** Whether this browser holds a live owner link of this agent (its cookie); an unknown or revoked link is no. */
  const isOwner = async (req: Request, agentId: string): Promise<boolean> => {
    const token = readOwnerCookie(req, agentId);
    if (!token) return false;
    try {
      const link = await callEscrow(broker, ESCROW.ownerLink, { token });
      return link.agentId === agentId;
    } catch (err) {
      if (toEnvelope(err, req.requestId).status === 404) return false;
      throw err;
    }
  };
  const agentOf = (agentId: string) =>
    callAgents(broker, AGENTS.get, { agentId }).catch(() => ({ displayName: null }));

  // ── owner page ──
  app.get('/owner/:token', async (req, res) => {
    try {
      const token = tokenOf(req);
      const { agentId } = await callEscrow(broker, ESCROW.ownerLink, { token });
      const [agent, balance, limits, recent, links] = await Promise.all([
        agentOf(agentId),
        callLedger(broker, LEDGER.balance, { agentId }),
        callEscrow(broker, ESCROW.limitsOf, { agentId }),
        callEscrow(broker, ESCROW.recentPurchases, { agentId, limit: 20 }),
        callEscrow(broker, ESCROW.ownerLinks, { token }),
      ]);
      setOwnerCookie(req, res, agentId, token);
      const csrf = csrfToken(req, res, `owner:${token}`);
      // Purchases awaiting approval get their own Approve/Decline forms (the approval page's actions).
      const approvalCsrf: Record<string, string> = {};
      for (const p of recent.purchases) {
        const t = p.status === 'awaiting_approval' ? approvalTokenOf(p) : null;
        if (t) approvalCsrf[p.id] = csrfToken(req, res, `approval:${t}`);
      }
      sendPage(res, 200, OwnerPage({
        approvalCsrf,
        path: `/owner/${encodeURIComponent(token)}`,
        agent: { id: agentId, displayName: agent.displayName },
        gasBalance: balance.gasBalance,
        limits,
        purchases: recent.purchases,
        csrf,
        saved: req.query.saved === '1',
        ownerLinks: links.links,
        revokedOthers: typeof req.query.revoked === 'string' && /^\d{1,4}$/.test(req.query.revoked) ? Number(req.query.revoked) : null,
      }));
    } catch (err) {
      htmlError(res, req, err, 'Owner page not found');
    }
  });

  tokenForm('/owner/:token/limits', 'owner', 'Limits not saved', async (token, req, res) => {
    const { agentId } = await callEscrow(broker, ESCROW.ownerLink, { token });
    const limits = parseLimitsForm(req.body ?? {});
    if (limits) await callEscrow(broker, ESCROW.setLimits, { agentId, limits });
    res.redirect(303, `/owner/${encodeURIComponent(token)}?saved=1`);
  });

  // Every other owner link of the agent (another browser that got one, e.g. on an earlier checkout) stops working.
  tokenForm('/owner/:token/revoke-others', 'owner', 'Owner links not revoked', async (token, _req, res) => {
    await callEscrow(broker, ESCROW.ownerLink, { token });
    const { revoked } = await callEscrow(broker, ESCROW.revokeOtherOwnerLinks, { token });
    res.redirect(303, `/owner/${encodeURIComponent(token)}?revoked=${revoked}`);
  });

  tokenForm('/owner/:token/revoke', 'owner', 'Owner link not revoked', async (token, _req, res) => {
    await callEscrow(broker, ESCROW.revokeOwnerLink, { token });
    message(res, 200, 'Owner link revoked', 'This link no longer opens the owner page. Approving the agent\'s next checkout gives you a new one.');
  });

  // ── approval page ──
  app.get('/approve/:token', async (req, res) => {
    try {
      const token = tokenOf(req);
      const { purchase } = await callEscrow(broker, ESCROW.approval, { token });
      const agent = await agentOf(purchase.buyerId);
      const owner = await isOwner(req, purchase.buyerId);
      const csrf = csrfToken(req, res, `approval:${token}`);
      sendPage(res, 200, ApprovalPage({ purchase, agent: { id: purchase.buyerId, displayName: agent.displayName }, action: `/approve/${encodeURIComponent(token)}`, csrf, owner }));
    } catch (err) {
      htmlError(res, req, err, 'Approval not found');
    }
  });

  for (const decision of ['approve', 'decline'] as const) {
    tokenForm(`/approve/:token/${decision}`, 'approval', 'Nothing changed', async (token, req, res) => {
      // Only the owner decides: the browser must hold the buyer's owner link (its cookie), which the agent never gets.
      const found = await callEscrow(broker, ESCROW.approval, { token });
      if (!(await isOwner(req, found.purchase.buyerId))) {
        message(res, 403, 'Only the owner can decide', `Nothing changed. ${OWNER_COOKIE_MISSING}`);
        return;
      }
      const { purchase } = await callEscrow(broker, ESCROW.decideApproval, { token, decision });
      message(res, 200, decision === 'approve' ? 'Purchase approved' : 'Purchase declined', approvalOutcome(purchase));
    });
  }
}
