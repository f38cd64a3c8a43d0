/**
 * The owner's browser: opening the owner link (/owner/<token>) or receiving it on the checkout
 * receipt leaves the owner token in an HttpOnly cookie named for the agent. Approving or declining a
 * purchase of that agent (/approve/<token>/...) needs it, so the agent — which only ever gets the
 * approvalUrl, never the owner link — cannot approve its own purchase.
 */
import { randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';
import { isHttps, readCookie } from './csrf';

const YEAR_MS = 365 * 24 * 3_600_000;

export function ownerCookieName(agentId: string): string {
  return `market_owner_${agentId.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

export function setOwnerCookie(req: Request, res: Response, agentId: string, token: string): void {
  res.cookie(ownerCookieName(agentId), token, { httpOnly: true, sameSite: 'lax', secure: isHttps(req), path: '/', maxAge: YEAR_MS });
}

export function readOwnerCookie(req: Request, agentId: string): string | null {
  const token = readCookie(req, ownerCookieName(agentId));
  return token && /^[A-Za-z0-9_-]{20,100}$/.test(token) ? token : null;
}

/**
 * The browser that submits a Stripe checkout's page (/checkout/<id>/continue) stages its spending
 * limits; they apply only if that browser is also the payer's, the one that claims the owner link on
 * /checkout/done with the secret Stripe returns it with (issue #39: this cookie is no proof of paying —
 * the agent can submit the page first). It is recognised by a random secret in its own HttpOnly cookie,
 * SameSite=Lax (not the CSRF cookie, which is Strict): Stripe sends the browser back from another
 * site, and a Strict cookie is not sent on that navigation.
 */
export const CHECKOUT_BROWSER_COOKIE = 'market_checkout_browser';

function validBrowserSecret(v: string | null): v is string {
  return !!v && /^[A-Za-z0-9_-]{32,64}$/.test(v);
}

/** This browser's proof for one checkout; sets the cookie when the browser has none. */
export function checkoutBrowserKey(req: Request, res: Response, sessionId: string): string {
  let secret = readCookie(req, CHECKOUT_BROWSER_COOKIE);
  if (!validBrowserSecret(secret)) {
    secret = randomBytes(24).toString('base64url');
    res.cookie(CHECKOUT_BROWSER_COOKIE, secret, { httpOnly: true, sameSite: 'lax', secure: isHttps(req), path: '/checkout', maxAge: 2 * 24 * 3_600_000 });
  }
  return `${secret}:${sessionId}`;
}

/** The same key on the return from Stripe, or null when the browser has no such cookie (its staged limits, if any, are not its to apply). */
export function readCheckoutBrowserKey(req: Request, sessionId: string): string | null {
  const secret = readCookie(req, CHECKOUT_BROWSER_COOKIE);
  return validBrowserSecret(secret) ? `${secret}:${sessionId}` : null;
}
