/**
 * The operator console at /admin: sign-in, then pages over the same operator actions /api/admin
 * serves (routes/admin-actions.ts, audited in gateway.audit_log). Forms post here with a CSRF token;
 * each action redirects back (303) with a one-time notice, so a reload never repeats it.
 */
import path from 'node:path';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { toEnvelope } from '../../../../packages/errors';
import { auditMoney } from '../../../../packages/ledger-audit';
import { OPERATOR_TOKEN_FILE, type GatewayDeps } from '../../deps';
import { operatorOf } from '../../routes/admin-kit';
import { operatorActions, PAYOUT_STATUSES, type BugReport, type ExperienceReport, type OperatorInput, type OperatorListing, type ReportsSummary } from '../../routes/admin-actions';
import { csrfToken, csrfValid, isHttps, readCookie } from '../csrf';
import { inRequestContext } from '../../http';
import { sendPage, MessagePage } from '../render';
import { ConsoleSessions } from './session';
import { AuditLogPage, DisputesPage, ListingsAdminPage, OverviewPage, PayoutsPage, ReportsPage, SignInPage, type Flash, type OverviewData } from './pages';
import { BUG_STATUSES, SUPPORT } from '../../../../packages/contracts/support';
import { LISTINGS } from '../../../../packages/contracts/listings';

const CSRF_PURPOSE = 'admin-console';
const FLASH_COOKIE = 'market_admin_flash';
const formBody = inRequestContext(express.urlencoded({ extended: false, limit: '16kb' }));

function setFlash(req: Request, res: Response, flash: Flash): void {
  res.cookie(FLASH_COOKIE, JSON.stringify(flash), { httpOnly: true, sameSite: 'strict', secure: isHttps(req), path: '/admin', maxAge: 60_000 });
}

function takeFlash(req: Request, res: Response): Flash | null {
  const raw = readCookie(req, FLASH_COOKIE);
  if (!raw) return null;
  res.clearCookie(FLASH_COOKIE, { path: '/admin' });
  try {
    const f = JSON.parse(raw);
    return (f?.kind === 'ok' || f?.kind === 'error') && typeof f.text === 'string' ? { kind: f.kind, text: f.text.slice(0, 500) } : null;
  } catch {
    return null;
  }
}

function errorText(err: unknown, requestId: string): string {
  const { body } = toEnvelope(err, requestId);
  return `${body.error.message}${body.error.hint ? ` ${body.error.hint}` : ''}`;
}

export function registerAdminConsole(app: Express, deps: GatewayDeps): void {
  const sessions = new ConsoleSessions(deps);
  const ops = operatorActions(deps);
  const localTokenFile = path.join(deps.config.dataDir, OPERATOR_TOKEN_FILE);

  const signInPage = (req: Request, res: Response, status: number, error: string | null) =>
    sendPage(res, status, <SignInPage csrf={csrfToken(req, res, CSRF_PURPOSE)} error={error} enabled={sessions.enabled()} localTokenFile={sessions.localOnly() ? localTokenFile : null} />);

  /** The cookie's operator when its session is valid and was not signed out (on any replica). */
  const liveOperator = async (req: Request): Promise<string | null> => {
    const s = sessions.sessionOf(req);
    if (!s) return null;
    const ended = await deps.db.query('SELECT 1 FROM gateway.console_sessions WHERE id = $1 AND ended_at IS NOT NULL', [s.sid]);
    return ended.rowCount ? null : s.operator;
  };

  app.get('/admin/login', async (req, res) => {
    if (await liveOperator(req).catch(() => null)) {
      res.redirect(303, '/admin');
      return;
    }
    signInPage(req, res, sessions.enabled() ? 200 : 404, null);
  });

  app.post('/admin/login', formBody, async (req, res) => {
    if (!sessions.enabled()) {
      signInPage(req, res, 404, null);
      return;
    }
    if (!csrfValid(req, CSRF_PURPOSE)) {
      signInPage(req, res, 403, 'The sign-in form expired. Please try again.');
      return;
    }
    // The token is always checked: the right one signs in whatever others typed from this address;
    // only wrong ones are slowed (429 once this address is past the limit).
    const ip = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    const token = typeof req.body?.token === 'string' ? req.body.token.trim() : '';
    if (!token || !sessions.signIn(req, res, token)) {
      const wait = await sessions.failed(ip);
      if (wait > 0) {
        res.set('retry-after', String(wait));
        signInPage(req, res, 429, `Too many wrong tokens. Try again in ${Math.ceil(wait / 60)} minutes.`);
        return;
      }
      signInPage(req, res, 401, 'Wrong admin token.');
      return;
    }
    res.redirect(303, '/admin');
  });

  // Everything else under /admin needs a session.
  const requireSession = async (req: Request, res: Response, next: NextFunction) => {
    const operator = await liveOperator(req).catch(() => null);
    if (!operator) {
      if (req.method === 'GET') res.redirect(303, '/admin/login');
      else signInPage(req, res, 401, 'Your session has ended. Please sign in again.');
      return;
    }
    req.operator = operator;
    next();
  };
  app.use('/admin', requireSession);

  app.post('/admin/logout', formBody, async (req, res) => {
    if (csrfValid(req, CSRF_PURPOSE)) {
      // Ended server-side: the same cookie, copied elsewhere, no longer opens the console.
      const s = sessions.sessionOf(req);
      if (s) {
        await deps.db
          .query(
            `INSERT INTO gateway.console_sessions (id, operator, expires_at, ended_at) VALUES ($1, $2, $3, now())
             ON CONFLICT (id) DO UPDATE SET ended_at = COALESCE(gateway.console_sessions.ended_at, now())`,
            [s.sid, s.operator, new Date(s.expiresAt).toISOString()],
          )
          .catch((err: Error) => deps.broker.logger.warn(`console logout not recorded (${err.message})`));
        await deps.db.query('DELETE FROM gateway.console_sessions WHERE expires_at < now()').catch(() => undefined);
      }
      sessions.signOut(req, res);
    }
    res.redirect(303, '/admin/login');
  });

  const common = (req: Request, res: Response) => ({ csrf: csrfToken(req, res, CSRF_PURPOSE), operator: operatorOf(req), flash: takeFlash(req, res) });
  const page = (fn: (req: Request, res: Response) => Promise<void>) => async (req: Request, res: Response) => {
    try {
      await fn(req, res);
    } catch (err) {
      const { status } = toEnvelope(err, req.requestId);
      sendPage(res, status, <MessagePage title="The console could not load this page" message={errorText(err, req.requestId)} />);
    }
  };

  /** A console form → one operator action → back to `back` with what happened. */
  const act = (run: (req: Request) => Promise<unknown>, done: (req: Request) => string, back: (req: Request) => string) => [
    formBody,
    async (req: Request, res: Response) => {
      if (!csrfValid(req, CSRF_PURPOSE)) {
        setFlash(req, res, { kind: 'error', text: 'The form expired (security token missing or stale); nothing was done. Please try again.' });
      } else {
        try {
          await run(req);
          setFlash(req, res, { kind: 'ok', text: done(req) });
        } catch (err) {
          setFlash(req, res, { kind: 'error', text: errorText(err, req.requestId) });
        }
      }
      res.redirect(303, back(req));
    },
  ];
  const id = (req: Request) => String(req.params.id);
  const input = (req: Request): OperatorInput => (req.body && typeof req.body === 'object' ? { ...req.body } : {});

  // ---- overview -----------------------------------------------------------------------------------
  app.get('/admin', page(async (req, res) => {
    const [audit, disputes, payouts, summary] = await Promise.all([
      (auditMoney((action) => deps.broker.call(action, {}, { timeout: 120_000 })) as Promise<OverviewData['audit']>).catch(() => null),
      ops.listDisputes(req, 'open').catch(() => null),
      ops.listPayouts(req, 'pending').catch(() => null),
      ops.call<ReportsSummary>(req, SUPPORT.summary).catch(() => null),
    ]);
    const data: OverviewData = {
      audit,
      openDisputes: disputes ? disputes.length : null,
      pendingPayouts: payouts ? payouts.length : null,
      bugs: summary?.bugs ?? null,
      experiences: summary?.experiences ?? null,
    };
    sendPage(res, 200, <OverviewPage {...common(req, res)} data={data} />);
  }));

  // ---- payouts ------------------------------------------------------------------------------------
  app.get('/admin/payouts', page(async (req, res) => {
    const status = typeof req.query.status === 'string' && PAYOUT_STATUSES.includes(req.query.status) ? req.query.status : 'pending';
    const payouts = await ops.listPayouts(req, status, 200);
    sendPage(res, 200, <PayoutsPage {...common(req, res)} status={status} statuses={PAYOUT_STATUSES} payouts={payouts} />);
  }));
  app.post('/admin/payouts/:id/pay', ...act((req) => ops.payPayout(req, id(req), input(req)), (req) => `Payout ${id(req)} marked paid.`, () => '/admin/payouts'));
  app.post('/admin/payouts/:id/reject', ...act((req) => ops.rejectPayout(req, id(req), input(req)), (req) => `Payout ${id(req)} rejected; the gas went back to the agent.`, () => '/admin/payouts'));

  // ---- disputes -----------------------------------------------------------------------------------
  app.get('/admin/disputes', page(async (req, res) => {
    const status = req.query.status === 'all' || req.query.status === 'resolved' ? req.query.status : 'open';
    sendPage(res, 200, <DisputesPage {...common(req, res)} status={status} disputes={await ops.listDisputes(req, status)} />);
  }));
  app.post('/admin/disputes/:id/resolve', ...act(
    (req) => ops.resolveDispute(req, id(req), input(req)),
    (req) => `Dispute on ${id(req)} resolved: ${input(req).outcome === 'refund' ? 'the buyer was refunded' : 'the seller was paid'}.`,
    () => '/admin/disputes',
  ));

  // ---- listings -----------------------------------------------------------------------------------
  app.get('/admin/listings', page(async (req, res) => {
    const q = typeof req.query.q === 'string' ? req.query.q.slice(0, 200) : '';
    const lookupId = typeof req.query.id === 'string' ? req.query.id.trim().slice(0, 100) : '';
    const [search, found] = await Promise.all([
      ops.call<{ listings: OperatorListing[] }>(req, LISTINGS.search, { ...(q ? { q } : {}), sort: 'newest', limit: 50 }),
      lookupId ? ops.call<OperatorListing>(req, LISTINGS.get, { listingId: lookupId }).catch(() => null) : Promise.resolve(null),
    ]);
    sendPage(res, 200, <ListingsAdminPage {...common(req, res)} q={q} lookupId={lookupId} found={found} listings={search.listings} />);
  }));
  const backToListing = (req: Request) => `/admin/listings?id=${encodeURIComponent(id(req))}`;
  app.post('/admin/listings/:id/takedown', ...act((req) => ops.takeDown(req, id(req), input(req)), (req) => `Listing ${id(req)} taken down.`, backToListing));
  app.post('/admin/listings/:id/restore', ...act((req) => ops.restore(req, id(req), input(req)), (req) => `Listing ${id(req)} restored.`, backToListing));
  app.post('/admin/listings/:id/seed', ...act(
    (req) => ops.setSeed(req, id(req), { isSeed: input(req).isSeed !== 'false' }),
    (req) => (input(req).isSeed !== 'false' ? 'The seller is now marked as a seed seller.' : 'The seed flag was cleared.'),
    backToListing,
  ));

  // ---- reports ------------------------------------------------------------------------------------
  app.get('/admin/reports', page(async (req, res) => {
    const [bugs, experiences] = await Promise.all([
      ops.call<{ bugs: BugReport[] }>(req, SUPPORT.listBugs, { limit: 100 }),
      ops.call<{ experiences: ExperienceReport[] }>(req, SUPPORT.listExperiences, { limit: 100 }),
    ]);
    sendPage(res, 200, <ReportsPage {...common(req, res)} bugs={bugs.bugs} experiences={experiences.experiences} bugStatuses={BUG_STATUSES} />);
  }));
  app.post('/admin/reports/bugs/:id/status', ...act((req) => ops.setBugStatus(req, id(req), input(req)), (req) => `Bug ${id(req)} is now ${input(req).status}.`, () => '/admin/reports'));

  // ---- audit log ----------------------------------------------------------------------------------
  app.get('/admin/audit-log', page(async (req, res) => {
    sendPage(res, 200, <AuditLogPage {...common(req, res)} entries={await ops.auditLog(200)} />);
  }));
}
