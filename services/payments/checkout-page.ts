/**
 * The sandbox checkout page and the pages around a checkout: plain HTML, no JavaScript, one form
 * per button, so any browser (or curl) can approve or decline.
 */
import type { CheckoutView } from './payments.service';

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>
  body { font-family: system-ui, sans-serif; max-width: 32rem; margin: 3rem auto; padding: 0 1rem; color: #1a1a1a; }
  .card { border: 1px solid #ddd; border-radius: 8px; padding: 1.5rem; }
  .sandbox { background: #fff4d6; border: 1px solid #e6c36a; padding: .5rem .75rem; border-radius: 6px; font-size: .9rem; }
  dl { display: grid; grid-template-columns: max-content 1fr; gap: .4rem 1rem; }
  dt { color: #666; } dd { margin: 0; font-weight: 600; }
  form { display: inline-block; margin-right: .5rem; }
  button { font-size: 1rem; padding: .6rem 1.4rem; border-radius: 6px; border: 1px solid #888; cursor: pointer; }
  button.approve { background: #1f7a3a; color: #fff; border-color: #1f7a3a; }
  button.decline { background: #fff; }
</style>
</head>
<body>
<div class="card">
${body}
</div>
</body>
</html>
`;
}

export function sandboxCheckoutPage(s: CheckoutView, displayName: string): string {
  const rows = `
<dl>
  <dt>Agent</dt><dd>${escapeHtml(displayName)}</dd>
  <dt>Pack</dt><dd>${escapeHtml(s.packId)}</dd>
  <dt>Gas</dt><dd>${s.gas} gas</dd>
  <dt>Price</dt><dd>${s.usd.toFixed(2)} USD</dd>
  <dt>Session</dt><dd><code>${escapeHtml(s.id)}</code></dd>
</dl>`;
  const base = `/checkout/sandbox/${encodeURIComponent(s.id)}`;
  const actions =
    s.status === 'open'
      ? `
<p>Approve to add ${s.gas} gas to ${escapeHtml(displayName)}'s balance. No card is charged in the sandbox.</p>
<form method="post" action="${base}/approve"><button type="submit" class="approve" name="decision" value="approve">Approve</button></form>
<form method="post" action="${base}/decline"><button type="submit" class="decline" name="decision" value="decline">Decline</button></form>
<p><small>Expires ${escapeHtml(s.expiresAt)}</small></p>`
      : `<p><strong>${escapeHtml(statusSentence(s))}</strong></p>`;
  return layout(`Checkout: ${s.gas} gas for ${displayName}`, `
<p class="sandbox">Sandbox checkout (development): no real payment is taken.</p>
<h1>Buy ${s.gas} gas</h1>
${rows}
${actions}`);
}

export function statusSentence(s: Pick<CheckoutView, 'status' | 'gas'>): string {
  switch (s.status) {
    case 'completed':
    case 'paid':
      return `This checkout is paid: ${s.gas} gas were added. Nothing more will be charged or credited.`;
    case 'declined':
      return 'This checkout was declined. Nothing was charged or credited. Ask your agent to call buy_gas again.';
    case 'expired':
      return 'This checkout has expired. Nothing was charged or credited. Ask your agent to call buy_gas again.';
    default:
      return 'This checkout is waiting for approval.';
  }
}

export function resultPage(title: string, message: string, sessionId?: string): string {
  const back = sessionId ? `<p><a href="/checkout/sandbox/${encodeURIComponent(sessionId)}">Back to the checkout</a></p>` : '';
  return layout(title, `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(message)}</p>\n<p>Your agent sees the new balance when it polls <code>wallet</code> or <code>whoami</code>.</p>${back}`);
}
