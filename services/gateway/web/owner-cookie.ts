/**
 * The owner's browser: opening the owner link (/owner/<token>) or receiving it on the checkout
 * receipt leaves the owner token in an HttpOnly cookie named for the agent. Approving or declining a
 * purchase of that agent (/approve/<token>/...) needs it, so the agent — which only ever gets the
 * approvalUrl, never the owner link — cannot approve its own purchase.
 */
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
