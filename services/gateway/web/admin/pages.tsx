/** The operator console's pages. Every form posts with the console's CSRF token. */
import type { ComponentChildren, VNode } from 'preact';
import { Layout, type NavLink } from '../render';
import { DataTable, LocalTime } from '../components';
import { gasAndUsd, plural, usd } from '../format';
import { CSRF_FIELD } from '../csrf';
import { SESSION_TTL_MS } from './session';
import type { AuditLogEntry, BugReport, ExperienceReport, OperatorDispute, OperatorListing, OperatorPayout } from '../../routes/admin-actions';

export const CONSOLE_NAV: NavLink[] = [
  { href: '/admin', label: 'Overview' },
  { href: '/admin/payouts', label: 'Payouts' },
  { href: '/admin/disputes', label: 'Disputes' },
  { href: '/admin/listings', label: 'Listings' },
  { href: '/admin/reports', label: 'Reports' },
  { href: '/admin/audit-log', label: 'Audit log' },
];

export interface Flash {
  kind: 'ok' | 'error';
  text: string;
}

export interface ConsoleProps {
  title: string;
  csrf: string;
  operator: string;
  flash: Flash | null;
  children: ComponentChildren;
}

export function ConsoleLayout({ title, csrf, operator, flash, children }: ConsoleProps): VNode {
  return (
    <Layout title={`${title} · operator console`} nav={CONSOLE_NAV} noindex>
      <div class="actions">
        <span class="muted">Signed in as {operator}.</span>
        <form method="post" action="/admin/logout">
          <input type="hidden" name={CSRF_FIELD} value={csrf} />
          <button type="submit">Sign out</button>
        </form>
      </div>
      {flash ? (
        <p class={`notice ${flash.kind}`} role={flash.kind === 'error' ? 'alert' : 'status'}>
          {flash.text}
        </p>
      ) : null}
      <h1>{title}</h1>
      {children}
    </Layout>
  );
}

/** A POST form carrying the CSRF token. */
export function ActionForm(props: { action: string; csrf: string; class?: string; children: ComponentChildren }): VNode {
  return (
    <form method="post" action={props.action} class={props.class ?? 'inline'}>
      <input type="hidden" name={CSRF_FIELD} value={props.csrf} />
      {props.children}
    </form>
  );
}

/** A status picker: one option per status, `selected` chosen. */
function StatusSelect({ statuses, selected }: { statuses: readonly string[]; selected: string }): VNode {
  return (
    <select name="status">
      {statuses.map((s) => (
        <option value={s} selected={s === selected}>
          {s}
        </option>
      ))}
    </select>
  );
}

/** One record as a card, labelled by its heading: the record's name and its badges (status, severity). */
function Card(props: { id: string; heading: ComponentChildren; badges: string[]; level?: 2 | 3; children: ComponentChildren }): VNode {
  const Heading = props.level === 3 ? 'h3' : 'h2';
  return (
    <section class="card" aria-labelledby={props.id}>
      <Heading id={props.id}>
        {props.heading}
        {props.badges.map((badge) => (
          <>
            {' '}
            <span class="badge">{badge}</span>
          </>
        ))}
      </Heading>
      {props.children}
    </section>
  );
}

/** One fact of a record; `prose` marks text someone wrote, shown as written. */
interface Fact {
  term: string;
  value: ComponentChildren;
  prose?: boolean;
}

/** A record's facts as a definition list; a fact the record does not have (null) is left out. */
function Facts({ facts }: { facts: Array<Fact | null> }): VNode {
  return (
    <dl class="facts">
      {facts.map((f) =>
        f ? (
          <>
            <dt>{f.term}</dt>
            <dd class={f.prose ? 'description' : undefined}>{f.value}</dd>
          </>
        ) : null,
      )}
    </dl>
  );
}

// ---- sign-in --------------------------------------------------------------------------------------

export function SignInPage(props: { csrf: string; error: string | null; localTokenFile: string | null; enabled: boolean }): VNode {
  return (
    <Layout title="Operator sign-in" noindex>
      <div class="narrow">
        <h1>Operator console</h1>
        <p>For the person who runs this marketplace: payouts, disputes, listings and reports. Agents and buyers never need to sign in here.</p>
        {!props.enabled ? (
          <p class="notice warn">
            The operator console is off: this server has no <code>ADMIN_TOKEN</code>. Set it and restart to turn the console on.
          </p>
        ) : (
          <>
            {props.error ? (
              <p class="notice error" role="alert">
                {props.error}
              </p>
            ) : null}
            <form method="post" action="/admin/login" class="stack">
              <input type="hidden" name={CSRF_FIELD} value={props.csrf} />
              <label>
                Admin token
                <input type="password" name="token" autocomplete="current-password" required />
              </label>
              <button type="submit" class="primary">
                Sign in
              </button>
            </form>
            <p class="muted">
              {props.localTokenFile ? (
                <>
                  No <code>ADMIN_TOKEN</code> is set, so on this machine you can sign in with the local operator token in{' '}
                  <code>{props.localTokenFile}</code> (accepted from this computer only).
                </>
              ) : (
                <>
                  Use the <code>ADMIN_TOKEN</code> the server was started with.
                </>
              )}{' '}
              The session lasts {plural(SESSION_TTL_MS / 3_600_000, 'hour')}; repeated wrong tokens are refused for a while.
            </p>
          </>
        )}
      </div>
    </Layout>
  );
}

// ---- overview -------------------------------------------------------------------------------------

export interface OverviewData {
  audit: { ok: boolean; checks: Array<{ name: string; ok: boolean; message: string }> } | null;
  openDisputes: number | null;
  pendingPayouts: number | null;
  bugs: { total: number; open: number } | null;
  experiences: { total: number; averageRating: number | null } | null;
}

const n = (v: number | null) => (v === null ? 'unavailable' : String(v));

export function OverviewPage(p: Omit<ConsoleProps, 'title' | 'children'> & { data: OverviewData }): VNode {
  const { data } = p;
  return (
    <ConsoleLayout title="Overview" {...p}>
      <ul class="figures">
        <li>
          <span class="n">{data.audit === null ? '?' : data.audit.ok ? 'Clean' : 'Problems'}</span> ledger audit
        </li>
        <li>
          <span class="n">{n(data.openDisputes)}</span> <a href="/admin/disputes">open disputes</a>
        </li>
        <li>
          <span class="n">{n(data.pendingPayouts)}</span> <a href="/admin/payouts">pending payouts</a>
        </li>
        <li>
          <span class="n">{data.bugs ? data.bugs.open : 'unavailable'}</span> <a href="/admin/reports">open bug reports</a>
          {data.bugs ? <span class="muted"> of {data.bugs.total}</span> : null}
        </li>
      </ul>
      <h2>Ledger audit</h2>
      {data.audit === null ? (
        <p class="notice error">The ledger did not answer.</p>
      ) : (
        <DataTable
          label="Ledger audit checks"
          columns={['Check', 'Result', 'Detail']}
          rows={data.audit.checks.map((c) => [c.name, c.ok ? 'ok' : <strong class="badge bad">failed</strong>, c.message])}
        />
      )}
      {data.experiences ? (
        <p class="muted">
          {data.experiences.total} experience reports, average rating {data.experiences.averageRating ?? '—'}.
        </p>
      ) : null}
    </ConsoleLayout>
  );
}

// ---- payouts --------------------------------------------------------------------------------------

export function PayoutsPage(p: Omit<ConsoleProps, 'title' | 'children'> & { status: string; payouts: OperatorPayout[]; statuses: string[] }): VNode {
  return (
    <ConsoleLayout title="Payouts" {...p}>
      <form method="get" action="/admin/payouts" class="inline">
        <label>
          Status{' '}
          <StatusSelect statuses={p.statuses} selected={p.status} />
        </label>
        <button type="submit">Show</button>
      </form>
      {p.payouts.length === 0 ? <p>No {p.status === 'all' ? '' : `${p.status} `}payouts.</p> : null}
      {p.payouts.map((c) => (
        <Card id={`h-${c.id}`} heading={c.id} badges={[c.status]}>
          <Facts
            facts={[
              { term: 'Agent', value: <code>{c.agentId}</code> },
              { term: 'To pay in BTC', value: <>the worth of {usd(c.netGas)} ({c.netGas} gas: {c.amountGas} requested less the {c.feeGas} gas fee)</> },
              { term: 'BTC address', value: <><code>{c.btcAddress}</code> ({c.btcNetwork})</> },
              { term: 'Requested', value: <LocalTime iso={c.createdAt} /> },
              c.btcTxid ? { term: 'Paid', value: <>{c.btcAmount} BTC, txid <code>{c.btcTxid}</code></> } : null,
              c.rejectReason ? { term: 'Rejected', value: c.rejectReason } : null,
            ]}
          />
          {c.status === 'pending' ? (
            <>
              <ActionForm action={`/admin/payouts/${encodeURIComponent(c.id)}/pay`} csrf={p.csrf}>
                <label>
                  Transaction id <input name="btcTxid" required minLength={64} maxLength={64} pattern="[0-9a-fA-F]{64}" size={30} />
                </label>
                <label>
                  BTC sent <input name="btcAmount" required inputMode="decimal" pattern="[0-9]+(\.[0-9]{1,8})?" size={12} />
                </label>
                <button type="submit" class="primary">
                  Mark paid
                </button>
              </ActionForm>
              <ActionForm action={`/admin/payouts/${encodeURIComponent(c.id)}/reject`} csrf={p.csrf}>
                <label>
                  Reason <input name="reason" required minLength={3} size={30} />
                </label>
                <button type="submit" class="danger">
                  Reject and return the gas
                </button>
              </ActionForm>
            </>
          ) : null}
        </Card>
      ))}
    </ConsoleLayout>
  );
}

// ---- disputes -------------------------------------------------------------------------------------

export function DisputesPage(p: Omit<ConsoleProps, 'title' | 'children'> & { status: string; disputes: OperatorDispute[] }): VNode {
  return (
    <ConsoleLayout title="Disputes" {...p}>
      <p>
        Showing {p.status} disputes. {p.status !== 'all' ? <a href="/admin/disputes?status=all">Show all</a> : <a href="/admin/disputes">Show open</a>}
      </p>
      {p.disputes.length === 0 ? <p>No disputes.</p> : null}
      {p.disputes.map((d) => {
        const pu = d.purchase;
        return (
          <Card id={`d-${pu.id}`} heading={pu.listingTitle} badges={[pu.status]}>
            <Facts
              facts={[
                { term: 'Purchase', value: <code>{pu.id}</code> },
                { term: 'Price held', value: gasAndUsd(pu.priceGas) },
                { term: 'Buyer / seller', value: <><code>{pu.buyerId}</code> / <code>{pu.sellerId}</code></> },
                { term: 'Opened by', value: <>{d.disputedBy}{pu.disputedAt ? <>, <LocalTime iso={pu.disputedAt} /></> : null}</> },
                { term: 'Reason', value: d.reason, prose: true },
                pu.requirements ? { term: 'Requirements', value: typeof pu.requirements === 'string' ? pu.requirements : JSON.stringify(pu.requirements), prose: true } : null,
                d.outcome ? { term: 'Resolved', value: <>{d.outcome} by {d.resolvedBy}{d.note ? `: ${d.note}` : ''}</> } : null,
                // Issue #35: the evaluator the buyer named, its fee (held with the price) and its verdict and report.
                pu.evaluator ? { term: 'Evaluator', value: <><code>{pu.evaluator.agentId}</code>, fee {gasAndUsd(pu.evaluator.feeGas)} held with the price{pu.evaluator.verdict ? `; verdict ${pu.evaluator.verdict}` : pu.evaluator.expiredAt ? '; no verdict in time' : '; no verdict yet'}</> } : null,
                pu.evaluator?.report ? { term: 'Evaluation report', value: pu.evaluator.report, prose: true } : null,
              ]}
            />
            <h3>Delivery</h3>
            {d.delivery ? (
              <pre tabIndex={0} role="region" aria-label="Delivery">
                <code>{JSON.stringify(d.delivery.delivery, null, 2)}</code>
              </pre>
            ) : (
              <p class="muted">Nothing delivered.</p>
            )}
            <h3>Messages</h3>
            {d.messages.length === 0 ? <p class="muted">No messages.</p> : null}
            <ul>
              {d.messages.map((m) => (
                <li>
                  <strong>{m.from}</strong> <span class="muted">({m.createdAt ? <LocalTime iso={m.createdAt} /> : null})</span>: <span class="description">{m.body}</span>
                </li>
              ))}
            </ul>
            {pu.status === 'disputed' ? (
              <ActionForm action={`/admin/disputes/${encodeURIComponent(pu.id)}/resolve`} csrf={p.csrf} class="stack">
                <label>
                  Note (both sides see it)
                  <textarea name="note" rows={2} />
                </label>
                <div class="actions">
                  <button type="submit" name="outcome" value="refund">
                    Refund the buyer ({pu.priceGas} gas)
                  </button>
                  <button type="submit" name="outcome" value="release">
                    Release to the seller ({pu.sellerNetGas} gas)
                  </button>
                </div>
              </ActionForm>
            ) : null}
          </Card>
        );
      })}
    </ConsoleLayout>
  );
}

// ---- listings -------------------------------------------------------------------------------------

function ListingActions({ l, csrf }: { l: OperatorListing; csrf: string }): VNode {
  const id = encodeURIComponent(l.id);
  return (
    <>
      {l.status === 'removed' ? (
        <ActionForm action={`/admin/listings/${id}/restore`} csrf={csrf}>
          <button type="submit" class="primary">
            Restore
          </button>
        </ActionForm>
      ) : (
        <ActionForm action={`/admin/listings/${id}/takedown`} csrf={csrf}>
          <label>
            Reason <input name="reason" required minLength={3} size={24} />
          </label>
          <button type="submit" class="danger">
            Take down
          </button>
        </ActionForm>
      )}
      <ActionForm action={`/admin/listings/${id}/seed`} csrf={csrf}>
        <input type="hidden" name="isSeed" value={l.seller.reputation.isSeed ? 'false' : 'true'} />
        <button type="submit">{l.seller.reputation.isSeed ? 'Clear seed flag' : 'Mark seller as seed'}</button>
      </ActionForm>
    </>
  );
}

export function ListingsAdminPage(p: Omit<ConsoleProps, 'title' | 'children'> & { q: string; listings: OperatorListing[]; found: OperatorListing | null; lookupId: string }): VNode {
  return (
    <ConsoleLayout title="Listings" {...p}>
      <form method="get" action="/admin/listings" class="inline">
        <label>
          Listing id <input name="id" value={p.lookupId} placeholder="lst_…" />
        </label>
        <button type="submit">Open</button>
      </form>
      {p.found ? (
        <section class="card" aria-label="Listing found">
          <h2>
            {p.found.title} <span class="badge">{p.found.status}</span>
          </h2>
          <p class="muted">
            <code>{p.found.id}</code> · {gasAndUsd(p.found.priceGas)} · seller {p.found.seller.displayName} <code>{p.found.seller.id}</code>
            {p.found.seller.reputation.isSeed ? ' · seed' : ''}
          </p>
          <ListingActions l={p.found} csrf={p.csrf} />
        </section>
      ) : p.lookupId ? (
        <p>No listing {p.lookupId}.</p>
      ) : null}
      <h2>Active listings</h2>
      <form method="get" action="/admin/listings" class="inline" role="search">
        <label>
          Search <input type="search" name="q" value={p.q} />
        </label>
        <button type="submit">Search</button>
      </form>
      <DataTable
        label="Active listings"
        columns={['Listing', 'Price', 'Seller', 'Actions']}
        rows={p.listings.map((l) => [
          <>
            <a href={`/listings/${encodeURIComponent(l.id)}`}>{l.title}</a>
            <br />
            <code>{l.id}</code>
          </>,
          usd(l.priceGas),
          <>
            {l.seller.displayName}
            {l.seller.reputation.isSeed ? ' (seed)' : ''}
          </>,
          <ListingActions l={l} csrf={p.csrf} />,
        ])}
      />
    </ConsoleLayout>
  );
}

// ---- reports --------------------------------------------------------------------------------------

export function ReportsPage(p: Omit<ConsoleProps, 'title' | 'children'> & { bugs: BugReport[]; experiences: ExperienceReport[]; bugStatuses: readonly string[] }): VNode {
  return (
    <ConsoleLayout title="Reports" {...p}>
      <h2>Bug reports</h2>
      {p.bugs.length === 0 ? <p>No bug reports.</p> : null}
      {p.bugs.map((b) => (
        <Card id={`b-${b.id}`} heading={b.title} badges={[b.severity, b.status]} level={3}>
          <p class="description">{b.description}</p>
          <p class="muted">
            <code>{b.id}</code> from <code>{b.agentId}</code>, reported {b.count}× , last <LocalTime iso={b.lastReportedAt} />
          </p>
          <ActionForm action={`/admin/reports/bugs/${encodeURIComponent(b.id)}/status`} csrf={p.csrf}>
            <label>
              Status{' '}
              <StatusSelect statuses={p.bugStatuses} selected={b.status} />
            </label>
            <button type="submit">Set status</button>
          </ActionForm>
        </Card>
      ))}
      <h2>Experience reports</h2>
      {p.experiences.length === 0 ? <p>No experience reports.</p> : null}
      <DataTable
        label="Experience reports"
        columns={['When', 'Step', 'Rating', 'Worked', 'Failed']}
        rows={p.experiences.map((e) => [e.createdAt ? <LocalTime iso={e.createdAt} /> : null, e.journeyStep, e.rating, e.whatWorked, e.whatFailed])}
      />
    </ConsoleLayout>
  );
}

// ---- audit log ------------------------------------------------------------------------------------

export function AuditLogPage(p: Omit<ConsoleProps, 'title' | 'children'> & { entries: AuditLogEntry[] }): VNode {
  return (
    <ConsoleLayout title="Audit log" {...p}>
      <p class="muted">Every operator action, from the API, the CLI and this console, newest first — refused attempts included.</p>
      <DataTable
        label="Audit log entries"
        columns={['When', 'Operator', 'Action', 'Target', 'Parameters', 'Result']}
        rows={p.entries.map((e) => [
          <LocalTime iso={e.at} />,
          e.operator,
          e.action,
          <code>{e.target}</code>,
          <code>{JSON.stringify(e.params)}</code>,
          e.ok ? 'ok' : `refused: ${e.error ?? ''}`,
        ])}
      />
    </ConsoleLayout>
  );
}
