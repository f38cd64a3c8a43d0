/**
 * Issue #23, "console logout does not end the session": a copied `market_admin` cookie must stop
 * working once its session signed out (POST /admin/logout), on this replica and any other (the end
 * is stored in the gateway's schema), while a session signed in separately keeps working.
 */
import { startTestApp, type TestApp } from '../../../test/kit';
import { mergeCookies, openPage } from '../../../test/kit/checkout';

const TOKEN = `adm_${'k'.repeat(40)}`;

describe('console logout ends the session server-side (issue #23)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { ADMIN_TOKEN: TOKEN } });
  });
  afterAll(async () => app?.stop());

  async function signIn(): Promise<string> {
    const login = await openPage(`${app.baseUrl}/admin/login`);
    const res = await fetch(`${app.baseUrl}/admin/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: login.cookie },
      body: new URLSearchParams({ csrf: login.csrf, token: TOKEN }).toString(),
      redirect: 'manual',
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/admin');
    return mergeCookies(login.cookie, res);
  }
  const consoleStatus = async (cookie: string) => {
    const r = await fetch(`${app.baseUrl}/admin`, { headers: { cookie }, redirect: 'manual' });
    return { status: r.status, location: r.headers.get('location') };
  };

  it('a copied session cookie is refused after logout; another session is not affected', async () => {
    const cookie = await signIn();
    const other = await signIn();
    expect(cookie).toMatch(/market_admin=/);
    expect((await consoleStatus(cookie)).status).toBe(200);
    const copied = cookie; // what an attacker copied from the browser

    const home = await openPage(`${app.baseUrl}/admin`, cookie);
    const out = await fetch(`${app.baseUrl}/admin/logout`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: new URLSearchParams({ csrf: home.csrf }).toString(),
      redirect: 'manual',
    });
    expect(out.status).toBe(303);

    expect(await consoleStatus(copied)).toEqual({ status: 303, location: '/admin/login' });
    // The sign-in page does not bounce a dead session back to the console (no redirect loop).
    const login = await fetch(`${app.baseUrl}/admin/login`, { headers: { cookie: copied }, redirect: 'manual' });
    expect(login.status).toBe(200);
    // The copied cookie cannot act either.
    const act = await fetch(`${app.baseUrl}/admin/listings/lst_x/takedown`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: copied },
      body: new URLSearchParams({ csrf: home.csrf, reason: 'x' }).toString(),
      redirect: 'manual',
    });
    expect(act.status).toBe(401);
    expect((await consoleStatus(other)).status).toBe(200);
  });
});
