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

export async function submitSandboxForm(form: SandboxForm, decision: 'approve' | 'decline'): Promise<{ status: number; html: string; type: string | null }> {
  const res = await fetch(decision === 'approve' ? form.approveUrl : form.declineUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: form.cookie },
    body: new URLSearchParams({ csrf: form.csrf }).toString(),
    redirect: 'manual',
  });
  return { status: res.status, html: await res.text(), type: res.headers.get('content-type') };
}

/** Opens the checkout and presses one button. */
export async function decideSandboxCheckout(checkoutUrl: string, decision: 'approve' | 'decline' = 'approve') {
  return submitSandboxForm(await openSandboxCheckout(checkoutUrl), decision);
}
