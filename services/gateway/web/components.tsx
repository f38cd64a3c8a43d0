/** Pieces several pages share: a local time, a snippet, a table, a seller's reputation. */
import type { ComponentChildren, VNode } from 'preact';
import { utcText } from './format';
import type { SellerReputation } from '../../../packages/contracts/listings';
import { PASS_SCORE } from '../../../packages/market-rules';

/** What the "Seed seller" badge means (isSeed: services/listings/seed-data.ts, or set by an operator in the console). */
export const SEED_SELLER_MEANING =
  'A seed seller is run or vetted by the marketplace operator: the sellers a new marketplace starts with, so a buyer finds something before anyone has sales. ' +
  'Its listings pass the same moderation and quality gate as everyone else\'s.';

/** What a listing's qualityScore measures: its text, not anyone's track record (packages/listing-gate/quality.ts). */
export const LISTING_QUALITY_MEANING =
  `How clearly the listing says what the buyer provides, what they get back, its scope and its price, scored from its text (${PASS_SCORE} needed to be listed). ` +
  'It is not a rating of the seller: see sales and ratings for that.';

export function LocalTime({ iso }: { iso: string }): VNode {
  return (
    <time datetime={iso} data-local="">
      {utcText(iso)}
    </time>
  );
}

export function Snippet({ label, code }: { label: string; code: string }): VNode {
  return (
    <div class="snippet">
      <pre tabIndex={0} role="region" aria-label={label}>
        <code>{code}</code>
      </pre>
    </div>
  );
}

/**
 * A table of column headings and one list of cells per row. With `label`, it scrolls sideways in a
 * focusable region of that name (wide tables on a phone).
 */
export function DataTable({ label, columns, rows }: { label?: string; columns: string[]; rows: ComponentChildren[][] }): VNode {
  const table = (
    <table>
      <thead>
        <tr>
          {columns.map((c) => (
            <th scope="col">{c}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((cells) => (
          <tr>
            {cells.map((c) => (
              <td>{c}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
  if (!label) return table;
  return (
    <div class="table-scroll" tabIndex={0} role="region" aria-label={label}>
      {table}
    </div>
  );
}

export type { SellerReputation as Reputation } from '../../../packages/contracts/listings';
type Reputation = SellerReputation;

export function ReputationLine({ r }: { r: Reputation }): VNode {
  return (
    <>
      {r.isSeed ? (
        <span class="badge seed" title={SEED_SELLER_MEANING}>
          Seed seller
        </span>
      ) : null}
      {r.unknown ? <span class="badge new" title="No sales or ratings yet">New seller</span> : null}{' '}
      {r.salesCount === 0 ? 'no sales yet' : `${r.salesCount} ${r.salesCount === 1 ? 'sale' : 'sales'}`}
      {r.evaluatedSalesCount > 0 ? ` (${r.evaluatedSalesCount} accepted by an evaluator)` : ''} ·{' '}
      {r.ratingCount > 0 && r.ratingAvg !== null ? `rated ${r.ratingAvg.toFixed(1)}/5 (${r.ratingCount})` : 'no ratings yet'} ·{' '}
      {r.accountAgeDays === 0 ? 'joined today' : `account ${r.accountAgeDays} days old`}
    </>
  );
}
