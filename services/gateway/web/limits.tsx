/**
 * The human's side of spending limits: the limit fields (on the checkout page and the owner page),
 * the owner page (balance, spending against the limits, recent purchases) and the approval page of a
 * purchase above the "ask me above" amount. Forms work without JavaScript and carry a CSRF token.
 */
import type { VNode } from 'preact';
import { CATEGORIES } from '../../../packages/tool-catalogue';
import { InvalidArgumentsError } from '../../../packages/errors';
import { APPROVAL_WINDOW_HOURS } from '../../../packages/market-rules';
import { awaits, STATES } from '../../../packages/contracts/purchase-machine';
import type { SpendingLimitsInput, SpendingLimitsView } from '../../../packages/contracts/escrow';
import type { PurchaseView } from '../../../packages/contracts/escrow';
import { Layout } from './render';
import { LocalTime } from './components';
import { timeLeft, usd } from './format';
import { CSRF_FIELD } from './csrf';

/** The hidden field that says a form carries limit fields (forms without it leave limits alone). */
export const LIMITS_FORM_FIELD = 'limitsForm';

const GAS_FIELDS = [
  ['perPurchaseMaxGas', 'Maximum per purchase (gas)'],
  ['dailyBudgetGas', 'Budget per day (gas, UTC day)'],
  ['weeklyBudgetGas', 'Budget per week (gas, Monday to Sunday UTC)'],
  ['approvalAboveGas', 'Ask me to approve purchases above (gas)'],
] as const;

/** The limit fields of a submitted form; empty = no such limit. */
export function parseLimitsForm(body: Record<string, unknown>): SpendingLimitsInput | null {
  if (body[LIMITS_FORM_FIELD] !== '1') return null;
  const out: SpendingLimitsInput = {};
  for (const [field, label] of GAS_FIELDS) {
    const raw = typeof body[field] === 'string' ? (body[field] as string).trim().replace(/[\s,_]/g, '') : '';
    if (raw === '') {
      out[field] = null;
      continue;
    }
    if (!/^\d{1,9}$/.test(raw)) throw new InvalidArgumentsError(`${label}: "${raw}" is not a whole number of gas.`, { hint: 'Leave it empty for no limit.', details: { field } });
    out[field] = Number(raw);
  }
  const cats = body.allowedCategories;
  const list = (Array.isArray(cats) ? cats : typeof cats === 'string' ? [cats] : []).filter((c): c is string => typeof c === 'string' && (CATEGORIES as readonly string[]).includes(c));
  out.allowedCategories = list.length ? list : null;
  return out;
}

/** Whether limits (as submitted, or as in force) restrict anything: an all-empty form sets none. */
export function restrictsSpending(limits: SpendingLimitsInput): boolean {
  return GAS_FIELDS.some(([field]) => typeof limits[field] === 'number') || !!limits.allowedCategories?.length;
}

/** What the person who approved a payment is told about the limits they submitted (or did not). */
export function limitsOutcome(limits: SpendingLimitsInput): string {
  return restrictsSpending(limits)
    ? 'Your spending limits are saved.'
    : 'No spending limits are set: the agent may spend its whole balance. You can set them at any time on your private owner page (its link is below), or when you approve its next checkout.';
}

export function LimitFields({ limits }: { limits: SpendingLimitsView | null }): VNode {
  const allowed = limits?.allowedCategories ?? null;
  return (
    <fieldset class="limits">
      <legend>Spending limits for this agent (optional)</legend>
      <p class="muted">
        Empty = no limit. Only you can change these, here or on your private owner page; the agent can read them but no tool can raise them.
      </p>
      <input type="hidden" name={LIMITS_FORM_FIELD} value="1" />
      {GAS_FIELDS.map(([field, label]) => (
        <label>
          {label}
          <input type="text" inputMode="numeric" name={field} value={limits?.[field] === null || limits?.[field] === undefined ? '' : String(limits[field])} />
        </label>
      ))}
      <fieldset>
        <legend>Allowed categories (none ticked = all)</legend>
        {CATEGORIES.map((c) => (
          <label class="inline">
            <input type="checkbox" name="allowedCategories" value={c} checked={!!allowed?.includes(c)} /> {c}
          </label>
        ))}
      </fieldset>
    </fieldset>
  );
}

function limitText(v: number | null): string {
  return v === null ? 'no limit' : `${v.toLocaleString('en-US')} gas`;
}

export function SpendingTable({ limits }: { limits: SpendingLimitsView }): VNode {
  return (
    <dl class="facts">
      <dt>Spent today (UTC)</dt>
      <dd>
        {limits.spentTodayGas.toLocaleString('en-US')} gas of {limitText(limits.dailyBudgetGas)}
      </dd>
      <dt>Spent this week</dt>
      <dd>
        {limits.spentThisWeekGas.toLocaleString('en-US')} gas of {limitText(limits.weeklyBudgetGas)}
      </dd>
      <dt>Per purchase</dt>
      <dd>{limitText(limits.perPurchaseMaxGas)}</dd>
      <dt>Ask me above</dt>
      <dd>{limitText(limits.approvalAboveGas)}</dd>
      <dt>Categories</dt>
      <dd>{limits.allowedCategories ? limits.allowedCategories.join(', ') : 'any'}</dd>
    </dl>
  );
}

export interface OwnerPageProps {
  path: string;
  agent: { id: string; displayName: string | null };
  gasBalance: number;
  limits: SpendingLimitsView;
  purchases: PurchaseView[];
  csrf: string;
  /** The CSRF token of each awaiting purchase's Approve/Decline forms, by purchase id. */
  approvalCsrf?: Record<string, string>;
  saved?: boolean;
  /** The agent's live owner links (this one is `current`): the human sees whether another browser holds one. */
  ownerLinks?: { createdAt: string; current: boolean }[];
  /** How many other links were just revoked. */
  revokedOthers?: number | null;
}

/** What the approval page says to a browser without the owner's cookie (the agent, or the human elsewhere). */
export const OWNER_COOKIE_MISSING =
  'Only the owner of this agent can approve or decline its purchases. Open your owner link (shown on your checkout receipt) in this browser, then come back to this page.';

/** The approval token at the end of a purchase's approvalUrl. */
export function approvalTokenOf(p: PurchaseView): string | null {
  if (!p.approvalUrl) return null;
  return new URL(p.approvalUrl).pathname.split('/').pop() || null;
}

export function OwnerPage(p: OwnerPageProps): VNode {
  const name = p.agent.displayName || 'your agent';
  return (
    <Layout title={`Owner page of ${name}`} noindex>
      <div class="narrow">
        <h1>{name}</h1>
        <p class="muted">
          Your private owner page for agent <code>{p.agent.id}</code>. Keep this link to yourself; revoke it below if it leaked.
        </p>
        {p.saved ? <p class="notice" role="status">Limits saved.</p> : null}
        <h2>Balance</h2>
        <p>
          <strong>{p.gasBalance.toLocaleString('en-US')} gas</strong> ({usd(p.gasBalance)} USD)
        </p>
        <h2>Spending against your limits</h2>
        <SpendingTable limits={p.limits} />
        <AwaitingApproval purchases={p.purchases} csrf={p.approvalCsrf ?? {}} />
        <h2>Recent purchases</h2>
        {p.purchases.length === 0 ? (
          <p>No purchases yet.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Service</th>
                <th scope="col">Gas</th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {p.purchases.map((x) => (
                <tr>
                  <td>
                    <LocalTime iso={x.createdAt} />
                  </td>
                  <td>{x.listingTitle}</td>
                  <td>{x.totalHeldGas ?? x.priceGas}</td>
                  <td>
                    {awaits(x.status, 'owner') && x.approvalUrl ? <a href={new URL(x.approvalUrl).pathname}>awaiting your approval</a> : x.status.replace(/_/g, ' ')}
                    {x.evaluator?.verdict ? (
                      <p class="muted">
                        Evaluator's verdict: {x.evaluator.verdict}. {x.evaluator.report}
                      </p>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <h2>Change the limits</h2>
        <form method="post" action={`${p.path}/limits`} class="stack">
          <input type="hidden" name={CSRF_FIELD} value={p.csrf} />
          <LimitFields limits={p.limits} />
          <button type="submit" class="primary">
            Save limits
          </button>
        </form>
        <OwnerLinks links={p.ownerLinks ?? []} path={p.path} csrf={p.csrf} revoked={p.revokedOthers ?? null} />
        <h2>Revoke this link</h2>
        <form method="post" action={`${p.path}/revoke`}>
          <input type="hidden" name={CSRF_FIELD} value={p.csrf} />
          <button type="submit">Revoke this owner link</button>
        </form>
      </div>
    </Layout>
  );
}

function OwnerLinks({ links, path, csrf, revoked }: { links: { createdAt: string; current: boolean }[]; path: string; csrf: string; revoked: number | null }): VNode {
  const others = links.filter((l) => !l.current);
  return (
    <>
      <h2>Who holds an owner link</h2>
      {revoked !== null ? (
        <p class="notice" role="status">
          {revoked} other owner link{revoked === 1 ? '' : 's'} revoked.
        </p>
      ) : null}
      {others.length === 0 ? (
        <p>Only this link opens the owner page of this agent.</p>
      ) : (
        <>
          <p>
            <strong>
              {links.length} owner links
            </strong>{' '}
            of this agent are live: this one and {others.length} other{others.length === 1 ? '' : 's'}, made on{' '}
            {others.map((l, i) => (
              <>
                {i ? ', ' : ''}
                <LocalTime iso={l.createdAt} />
              </>
            ))}
            . Each checkout gives one to the browser that paid it. If you did not open them all, revoke the others: only this link will work.
          </p>
          <form method="post" action={`${path}/revoke-others`}>
            <input type="hidden" name={CSRF_FIELD} value={csrf} />
            <button type="submit">Revoke every other owner link</button>
          </form>
        </>
      )}
    </>
  );
}

function AwaitingApproval({ purchases, csrf }: { purchases: PurchaseView[]; csrf: Record<string, string> }): VNode | null {
  const waiting = purchases.filter((x) => awaits(x.status, 'owner') && approvalTokenOf(x) && csrf[x.id]);
  if (waiting.length === 0) return null;
  return (
    <>
      <h2>Awaiting your approval</h2>
      <ul class="stack">
        {waiting.map((x) => {
          const action = `/approve/${encodeURIComponent(approvalTokenOf(x)!)}`;
          return (
            <li>
              <strong>{x.listingTitle}</strong> — {x.priceGas.toLocaleString('en-US')} gas
              <div class="actions">
                <form method="post" action={`${action}/approve`}>
                  <input type="hidden" name={CSRF_FIELD} value={csrf[x.id]} />
                  <button type="submit" class="primary" aria-label={`Approve ${x.priceGas} gas for ${x.listingTitle}`}>
                    Approve {x.priceGas} gas
                  </button>
                </form>
                <form method="post" action={`${action}/decline`}>
                  <input type="hidden" name={CSRF_FIELD} value={csrf[x.id]} />
                  <button type="submit" aria-label={`Decline ${x.listingTitle}`}>
                    Decline
                  </button>
                </form>
              </div>
            </li>
          );
        })}
      </ul>
    </>
  );
}

export function ApprovalPage(props: { purchase: PurchaseView; agent: { id: string; displayName: string | null }; action: string; csrf: string; owner: boolean }): VNode {
  const { purchase: p, agent, csrf } = props;
  const name = agent.displayName || 'an agent';
  const open = awaits(p.status, 'owner');
  return (
    <Layout title={`Approve ${p.priceGas} gas for ${p.listingTitle}`} noindex>
      <div class="narrow">
        <h1>
          {name} asks to spend {p.priceGas.toLocaleString('en-US')} gas
        </h1>
        <p>This purchase is above the amount you asked to approve. Its gas is held in escrow until you answer.</p>
        <dl class="facts">
          <dt>Agent</dt>
          <dd>
            {name} <code>{agent.id}</code>
          </dd>
          <dt>Service</dt>
          <dd>
            <a href={`/listings/${encodeURIComponent(p.listingId)}`}>{p.listingTitle}</a>
          </dd>
          <dt>Price</dt>
          <dd>
            {p.priceGas.toLocaleString('en-US')} gas ({usd(p.priceGas)} USD)
          </dd>
          <dt>Status</dt>
          <dd>{p.status.replace(/_/g, ' ')}</dd>
          {open && p.approvalExpiresAt ? (
            <>
              <dt>Expires</dt>
              <dd>
                <LocalTime iso={p.approvalExpiresAt} /> — {timeLeft(p.approvalExpiresAt)}; unanswered after {APPROVAL_WINDOW_HOURS} h it is declined
              </dd>
            </>
          ) : null}
          <dt>Reference</dt>
          <dd>
            <code>{p.id}</code>
          </dd>
        </dl>
        {open && !props.owner ? (
          <p class="notice" role="status">
            {OWNER_COOKIE_MISSING}
          </p>
        ) : open ? (
          <div class="actions">
            <form method="post" action={`${props.action}/approve`}>
              <input type="hidden" name={CSRF_FIELD} value={csrf} />
              <button type="submit" class="primary">
                Approve {p.priceGas} gas
              </button>
            </form>
            <form method="post" action={`${props.action}/decline`}>
              <input type="hidden" name={CSRF_FIELD} value={csrf} />
              <button type="submit">Decline</button>
            </form>
          </div>
        ) : (
          <p>
            <strong>{approvalOutcome(p)}</strong>
          </p>
        )}
      </div>
    </Layout>
  );
}

/** What became of a purchase the human was asked about, read from its state's flags in the machine (no state named here). */
export function approvalOutcome(p: PurchaseView): string {
  const state = STATES[p.status];
  if (awaits(p.status, 'owner')) return 'It waits for your answer.';
  if (!state.sellerSees && state.final) return 'It was not approved: the held gas went back to the agent and the seller was never told.';
  if (!state.sellerSees) return 'Its funding is still being confirmed.';
  return `It was approved: the seller now sees it (status ${p.status.replace(/_/g, ' ')}).`;
}
