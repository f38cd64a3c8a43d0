/**
 * The operator console's sign-in: the admin token (or, on a development machine, the local operator
 * token from loopback — the same two credentials /api/admin accepts) is exchanged for a session
 * cookie: HttpOnly, SameSite=Strict, Path=/admin, expiring after SESSION_TTL_MS. The cookie is
 * signed with a key derived from that credential, so it works on every gateway replica and
 * changing ADMIN_TOKEN ends every session. Failed sign-ins are throttled per client address, counted
 * in the store every gateway replica shares (limits.ts): 5 in 15 minutes whatever replica answers.
 * Each session has a random id in its cookie; signing out records the id as ended in the gateway's
 * schema (gateway.console_sessions), so a copied cookie dies with the session on every replica
 * (issue #23). console-routes checks that list on every request.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import type { GatewayDeps } from '../../deps';
import { SharedLimits, type SharedCounter } from '../../limits';
import { isHttps, readCookie } from '../csrf';

export const SESSION_COOKIE = 'market_admin';
export const SESSION_TTL_MS = 2 * 3_600_000;
export const SIGNIN_MAX_FAILURES = 5;
export const SIGNIN_WINDOW_MS = 15 * 60_000;

type Credential = 'admin-token' | 'local-operator';

function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

function isLoopback(req: Request): boolean {
  const ip = req.socket.remoteAddress ?? '';
  return ip === '127.0.0.1' || ip === '::1' || ip === '::ffff:127.0.0.1';
}

export class ConsoleSessions {
  private readonly failures: SharedCounter;

  constructor(private readonly deps: Pick<GatewayDeps, 'config' | 'operatorToken' | 'db' | 'broker'>) {
    const limits = new SharedLimits({ db: deps.db, logger: deps.broker.logger });
    this.failures = limits.counter('console-signin', SIGNIN_MAX_FAILURES, SIGNIN_WINDOW_MS / 1000);
  }

  /** Whether a credential is configured at all (else the console is off, as /api/admin is). */
  enabled(): boolean {
    return !!this.deps.config.adminToken || !!this.deps.operatorToken;
  }

  /** Only the local operator token is available (development without ADMIN_TOKEN). */
  localOnly(): boolean {
    return !this.deps.config.adminToken && !!this.deps.operatorToken;
  }

  private secretOf(credential: Credential): string | null {
    return credential === 'admin-token' ? this.deps.config.adminToken : this.deps.operatorToken;
  }

  private signature(credential: Credential, expiresAt: number, sid: string): string | null {
    const secret = this.secretOf(credential);
    if (!secret) return null;
    const key = createHmac('sha256', secret).update('admin-console-session').digest();
    return createHmac('sha256', key).update(`${credential}.${expiresAt}.${sid}`).digest('base64url');
  }

  /** Counts a wrong token from this address; the seconds until it may try again once past the limit, else 0. */
  async failed(ip: string): Promise<number> {
    const v = await this.failures.consume(ip);
    return v.allowed ? 0 : v.retryAfterSeconds;
  }

  /** Checks a typed token; on success sets the session cookie and answers who signed in. */
  signIn(req: Request, res: Response, token: string, now = Date.now()): Credential | null {
    const { adminToken } = this.deps.config;
    let credential: Credential | null = null;
    if (adminToken && safeEqual(token, adminToken)) credential = 'admin-token';
    else if (this.deps.operatorToken && isLoopback(req) && safeEqual(token, this.deps.operatorToken)) credential = 'local-operator';
    if (!credential) return null;
    const expiresAt = now + SESSION_TTL_MS;
    const sid = randomBytes(16).toString('base64url');
    const value = `v2.${credential}.${expiresAt}.${sid}.${this.signature(credential, expiresAt, sid)}`;
    res.cookie(SESSION_COOKIE, value, { httpOnly: true, sameSite: 'strict', secure: isHttps(req), path: '/admin', maxAge: SESSION_TTL_MS });
    return credential;
  }

  signOut(req: Request, res: Response): void {
    res.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'strict', secure: isHttps(req), path: '/admin' });
  }

  /** The operator name for the audit log when the cookie is a valid, unexpired session; else null. */
  operatorOf(req: Request, now = Date.now()): string | null {
    return this.sessionOf(req, now)?.operator ?? null;
  }

  /**
   * The cookie's session when it is validly signed and unexpired (whether it was ended by a sign-out
   * is for the caller to check: console-routes looks the id up in gateway.console_sessions).
   */
  sessionOf(req: Request, now = Date.now()): { operator: string; sid: string; expiresAt: number } | null {
    const value = readCookie(req, SESSION_COOKIE);
    const m = value ? /^v2\.(admin-token|local-operator)\.(\d{10,16})\.([A-Za-z0-9_-]{16,32})\.([A-Za-z0-9_-]{20,})$/.exec(value) : null;
    if (!m) return null;
    const credential = m[1] as Credential;
    const expiresAt = Number(m[2]);
    const sid = m[3];
    if (!(expiresAt > now) || expiresAt > now + SESSION_TTL_MS) return null;
    if (credential === 'local-operator' && !isLoopback(req)) return null;
    const want = this.signature(credential, expiresAt, sid);
    if (!want || !safeEqual(want, m[4])) return null;
    return { operator: `console:${credential}`, sid, expiresAt };
  }
}
