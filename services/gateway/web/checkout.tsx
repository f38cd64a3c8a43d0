/**
 * The checkout pages a person approves a gas purchase on: who is being paid (this service, its
 * address), for which agent (display name and id), how much, until when, and what approving does
 * and does not do. The sandbox page's forms work without JavaScript and carry a CSRF token.
 */
import type { ComponentChildren, VNode } from 'preact';
import type { CheckoutView } from '../../../packages/contracts/payments';
import { Layout } from './render';
import { LocalTime } from './components';
import { PRODUCT_NAME, timeLeft, usd } from './format';
import { CSRF_FIELD } from './csrf';
import { LimitFields, SpendingTable } from './limits';
import type { SpendingLimitsView } from '../../../packages/contracts/escrow';

export interface CheckoutContext {
  baseUrl: string;
  operatorContact: string | null;
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

function OperatorLine({ ctx }: { ctx: CheckoutContext }): VNode {
  return (
    <p class="muted">
      Sold by {PRODUCT_NAME} at {ctx.baseUrl}. Operator contact:{' '}
      {ctx.operatorContact ?? 'not published by this server'}. <a href="/terms">Terms</a>
    </p>
  );
}

/** The checkout's heading, who is paid, and the facts of the pack (both checkout pages). */
function CheckoutFacts(props: { session: CheckoutView; name: string; agentId: string; ctx: CheckoutContext; note?: string; showPackAndReference?: boolean }): VNode {
  const { session: s, name, ctx } = props;
  return (
    <>
      <h1>
        Buy {s.gas.toLocaleString('en-US')} gas for {name}
      </h1>
      <p>
        You are paying <strong>{PRODUCT_NAME}</strong> ({ctx.baseUrl}) for gas, the unit agents spend on this marketplace.{props.note ?? ''}
      </p>
      <dl class="facts">
        <dt>Agent</dt>
        <dd>
          {name} <code>{props.agentId}</code>
        </dd>
        {props.showPackAndReference ? (
          <>
            <dt>Pack</dt>
            <dd>{s.packId}</dd>
          </>
        ) : null}
        <dt>Gas</dt>
        <dd>{s.gas.toLocaleString('en-US')} gas</dd>
        <dt>Price</dt>
        <dd>{usd(s.gas)} USD</dd>
        <dt>Expires</dt>
        <dd>
          <LocalTime iso={s.expiresAt} /> — {s.status === 'open' ? `expires ${timeLeft(s.expiresAt)}` : s.status}
        </dd>
        {props.showPackAndReference ? (
          <>
            <dt>Reference</dt>
            <dd>
              <code>{s.id}</code>
            </dd>
          </>
        ) : null}
      </dl>
    </>
  );
}

/** Both checkout pages: the facts, then what the person can do while the checkout is open, or else how it ended. */
function CheckoutFrame(props: { title: string; banner?: VNode; facts: VNode; session: CheckoutView; ctx: CheckoutContext; children: ComponentChildren }): VNode {
  return (
    <Layout title={props.title} noindex>
      <div class="narrow">
        {props.banner}
        {props.facts}
        {props.session.status === 'open' ? (
          props.children
        ) : (
          <p>
            <strong>{statusSentence(props.session)}</strong>
          </p>
        )}
        <OperatorLine ctx={props.ctx} />
      </div>
    </Layout>
  );
}

export function SandboxCheckoutPage(props: { session: CheckoutView; agent: { id: string; displayName: string | null }; limits: SpendingLimitsView | null; csrf: string; ctx: CheckoutContext }): VNode {
  const { session: s, agent, csrf, ctx } = props;
  const base = `/checkout/sandbox/${encodeURIComponent(s.id)}`;
  const name = agent.displayName || 'an agent';
  return (
    <CheckoutFrame
      title={`Approve ${s.gas} gas for ${name}`}
      banner={<p class="notice sandbox">Sandbox checkout (development): no card is charged and no real money moves.</p>}
      facts={<CheckoutFacts session={s} name={name} agentId={agent.id} ctx={ctx} showPackAndReference />}
      session={s}
      ctx={ctx}
    >
      <h2>What approving does</h2>
      <ul>
        <li>
          Adds {s.gas.toLocaleString('en-US')} gas to the balance of agent {name} (<code>{agent.id}</code>), once.
        </li>
        <li>The agent can then spend that gas on listings; each purchase is held in escrow until the agent confirms the delivery.</li>
      </ul>
      <h2>What it does not do</h2>
      <ul>
        <li>No card details reach the agent, and none are asked for on this sandbox page.</li>
        <li>It buys no service by itself, sets up nothing recurring, and gives the agent no other access.</li>
      </ul>
      <div class="actions">
        <form method="post" action={`${base}/approve`} class="stack">
          <input type="hidden" name={CSRF_FIELD} value={csrf} />
          <LimitFields limits={props.limits} />
          <button type="submit" class="primary">
            Approve {usd(s.gas)}
          </button>
        </form>
        <form method="post" action={`${base}/decline`}>
          <input type="hidden" name={CSRF_FIELD} value={csrf} />
          <button type="submit">Decline</button>
        </form>
      </div>
      <p class="muted">Not sure this is your agent? Decline: nothing is charged, and the agent can ask again.</p>
    </CheckoutFrame>
  );
}

/**
 * The page a human passes through before Stripe's hosted payment page: who is paid, for which agent,
 * how much, and the agent's spending-limit fields; "Continue to payment" goes on to Stripe.
 */
export function PayCheckoutPage(props: { session: CheckoutView; agent: { id: string; displayName: string | null }; limits: SpendingLimitsView | null; csrf: string; ctx: CheckoutContext }): VNode {
  const { session: s, agent, csrf, ctx } = props;
  const name = agent.displayName || 'an agent';
  return (
    <CheckoutFrame
      title={`Buy ${s.gas} gas for ${name}`}
      facts={<CheckoutFacts session={s} name={name} agentId={agent.id} ctx={ctx} note=" The card payment itself happens on Stripe's page." />}
      session={s}
      ctx={ctx}
    >
      <form method="post" action={`/checkout/${encodeURIComponent(s.id)}/continue`} class="stack">
        <input type="hidden" name={CSRF_FIELD} value={csrf} />
        <LimitFields limits={props.limits} />
        <p class="muted">
          The limits take effect when you come back from paying: the page Stripe returns you to (only the person who pays is sent there) gives you the private owner link, once.
        </p>
        <button type="submit" class="primary">
          Continue to payment ({usd(s.gas)} USD)
        </button>
      </form>
    </CheckoutFrame>
  );
}

/** `limits`: those now in force, shown with the owner link (Stripe's return page). */
export function CheckoutResultPage(props: { title: string; message: string; sessionId?: string; ownerUrl?: string; limits?: SpendingLimitsView; ctx: CheckoutContext }): VNode {
  return (
    <Layout title={props.title} noindex>
      <div class="narrow">
        <h1>{props.title}</h1>
        <p>{props.message}</p>
        <p>Your agent sees the new balance when it polls <code>wallet</code> or <code>whoami</code>.</p>
        {props.ownerUrl ? (
          <div class="notice">
            <h2>Your private owner page</h2>
            <p>
              Bookmark this link now: it is shown only once. It shows the agent's balance, its spending against your limits and its recent purchases, and lets you change the limits.
              Do not give it to the agent.
            </p>
            <p>
              <a href={props.ownerUrl} data-owner-link="">{props.ownerUrl}</a>
            </p>
            {props.limits ? (
              <>
                <h3>Spending limits now in force</h3>
                <SpendingTable limits={props.limits} />
              </>
            ) : null}
          </div>
        ) : null}
        {props.sessionId ? (
          <p>
            <a href={`/checkout/sandbox/${encodeURIComponent(props.sessionId)}`}>Back to the checkout</a>
          </p>
        ) : null}
        <OperatorLine ctx={props.ctx} />
      </div>
    </Layout>
  );
}
