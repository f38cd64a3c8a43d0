/**
 * The sandbox checkout as a browser submits it: GET the page (which sets the CSRF cookie and puts
 * the token in each form), then POST the chosen form with both. For tests and the bench, which
 * approve gas purchases without a real browser.
 */
export interface SandboxForm {
  cookie: string;
  csrf: string;
  /** Absolute URL of the approve / decline form actions. */
  approveUrl: string;
  declineUrl: string;
  html: string;
}

export async function openSandboxCheckout(checkoutUrl: string): Promise<SandboxForm> {
  const res = await fetch(checkoutUrl);
  const html = await res.text();
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0];
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
  const action = (d: string) => `${checkoutUrl.replace(/\/$/, '')}/${d}`;
  return { cookie, csrf, approveUrl: action('approve'), declineUrl: action('decline'), html };
}

/** The browser's cookies after a response: those it sent, replaced or added to by each Set-Cookie. */
export function mergeCookies(sent: string, res: Response): string {
  const jar = new Map<string, string>();
  const add = (pair: string) => {
    const i = pair.indexOf('=');
    if (i > 0) jar.set(pair.slice(0, i).trim(), pair.trim());
  };
  for (const pair of sent.split(';')) add(pair);
  for (const c of res.headers.getSetCookie()) add(c.split(';')[0]);
  return [...jar.values()].join('; ');
}

/** Form fields besides the CSRF token (an array = a repeated field, e.g. ticked checkboxes). */
export type FormFields = Record<string, string | string[]>;

export async function submitSandboxForm(form: SandboxForm, decision: 'approve' | 'decline', fields: FormFields = {}): Promise<{ status: number; html: string; type: string | null; cookie: string }> {
  return postPageForm(decision === 'approve' ? form.approveUrl : form.declineUrl, form, fields);
}

/** POSTs a page's form as a browser would: its cookie, its CSRF token and the fields. */
export async function postPageForm(url: string, page: { cookie: string; csrf: string }, fields: FormFields = {}): Promise<{ status: number; html: string; type: string | null; location: string | null; cookie: string }> {
  const body = new URLSearchParams({ csrf: page.csrf });
  for (const [k, v] of Object.entries(fields)) for (const x of Array.isArray(v) ? v : [v]) body.append(k, x);
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: page.cookie },
    body: body.toString(),
    redirect: 'manual',
  });
  return { status: res.status, html: await res.text(), type: res.headers.get('content-type'), location: res.headers.get('location'), cookie: mergeCookies(page.cookie, res) };
}

/**
 * Any page with a CSRF-protected form (owner page, approval page): the browser's cookies after it
 * (`cookie`: those sent plus those set), the first form's token and the HTML.
 */
export async function openPage(url: string, cookie = ''): Promise<{ cookie: string; csrf: string; html: string; status: number }> {
  const res = await fetch(url, { headers: cookie ? { cookie } : {} });
  const html = await res.text();
  return { cookie: mergeCookies(cookie, res), csrf: /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '', html, status: res.status };
}

/** Opens the checkout and presses one button. */
export async function decideSandboxCheckout(checkoutUrl: string, decision: 'approve' | 'decline' = 'approve') {
  return submitSandboxForm(await openSandboxCheckout(checkoutUrl), decision);
}

/** An agent buys a gas pack the way its human does: buy_gas, then Approve on the sandbox checkout page. */
export async function buyGasByCard(app: { baseUrl: string; api: { ok<T = any>(tool: string, args?: Record<string, unknown>, apiKey?: string | null): Promise<T> } }, apiKey: string, packId = 'starter') {
  const checkout = await app.api.ok<{ sessionId: string; checkoutUrl: string; gas: number }>('buy_gas', { packId }, apiKey);
  const approved = await decideSandboxCheckout(`${app.baseUrl}${new URL(checkout.checkoutUrl).pathname}`, 'approve');
  if (approved.status !== 200) throw new Error(`sandbox approve answered ${approved.status}`);
  return checkout;
}
