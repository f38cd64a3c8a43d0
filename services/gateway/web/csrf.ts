/**
 * CSRF tokens for the pages' forms, without server state: a random per-browser secret in an
 * HttpOnly, SameSite=Strict cookie, and in each form HMAC(secret, purpose) — so a token is only good
 * for the form it was made for (one checkout, the console), and another site can neither read the
 * cookie nor compute the token.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';

export const CSRF_COOKIE = 'market_csrf';
export const CSRF_FIELD = 'csrf';

export function readCookie(req: Request, name: string): string | null {
  const header = req.headers.cookie;
  if (!header) return null;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i < 0) continue;
    if (part.slice(0, i).trim() === name) {
      try {
        return decodeURIComponent(part.slice(i + 1).trim());
      } catch {
        return null;
      }
    }
  }
  return null;
}

export function isHttps(req: Request): boolean {
  return req.secure;
}

function sign(secret: string, purpose: string): string {
  return createHmac('sha256', secret).update(`csrf:${purpose}`).digest('base64url');
}

/** The token for a form of this purpose; sets the browser's secret cookie when it has none. */
export function csrfToken(req: Request, res: Response, purpose: string): string {
  // A page with several forms asks several times: a secret made earlier in this response is reused.
  let secret = (res.locals.csrfSecret as string | undefined) ?? readCookie(req, CSRF_COOKIE);
  if (!secret || !/^[A-Za-z0-9_-]{32,64}$/.test(secret)) {
    secret = randomBytes(24).toString('base64url');
    res.cookie(CSRF_COOKIE, secret, { httpOnly: true, sameSite: 'strict', secure: isHttps(req), path: '/' });
  }
  res.locals.csrfSecret = secret;
  return sign(secret, purpose);
}

export function csrfValid(req: Request, purpose: string): boolean {
  const secret = readCookie(req, CSRF_COOKIE);
  const sent = req.body && typeof req.body === 'object' ? (req.body as Record<string, unknown>)[CSRF_FIELD] : undefined;
  if (!secret || typeof sent !== 'string') return false;
  const want = Buffer.from(sign(secret, purpose));
  const got = Buffer.from(sent);
  return want.length === got.length && timingSafeEqual(want, got);
}
